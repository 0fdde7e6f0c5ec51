import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The files read as project instructions, first found wins (SPEC §7: CLAUDE.md is the fallback). */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md"] as const;

/** How much of the file goes into every system prompt: beyond this it costs every request. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;

export interface ProjectInstructions {
  /** The file's name, relative to the workspace. */
  file: string;
  text: string;
  /** The file's size when it was cut to INSTRUCTIONS_MAX_BYTES. */
  cutFromBytes?: number;
}

/**
 * `AGENTS.md` at the workspace root, else `CLAUDE.md`; undefined when neither is
 * there (or readable: a missing file is the common case, not an error).
 */
export function readProjectInstructions(workspace: string): ProjectInstructions | undefined {
  for (const file of INSTRUCTION_FILES) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(workspace, file));
    } catch {
      continue;
    }
    if (bytes.length <= INSTRUCTIONS_MAX_BYTES) return { file, text: bytes.toString("utf8") };
    return { file, text: cutUtf8(bytes, INSTRUCTIONS_MAX_BYTES), cutFromBytes: bytes.length };
  }
  return undefined;
}

/** At most `max` bytes, never ending inside a multi-byte character. */
function cutUtf8(bytes: Buffer, max: number): string {
  let end = max;
  // Continuation bytes are 10xxxxxx: step back to the start of the character cut in two.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString("utf8");
}
