import { readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/** The files read as instructions in a directory, first found wins (SPEC §7: CLAUDE.md is the fallback). */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md"] as const;

/** How much of each file goes into every system prompt: beyond this it costs every request. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;

export interface ProjectInstructions {
  /** The file as shown to the model: relative to the workspace (`pkg/AGENTS.md`), or the user's file by its full path. */
  file: string;
  text: string;
  /** The file's size when it was cut to INSTRUCTIONS_MAX_BYTES. */
  cutFromBytes?: number;
  /** `user`: the user's own `~/.config/agent/AGENTS.md`, for every project. */
  scope: "user" | "project";
}

/**
 * `AGENTS.md` at the workspace root, else `CLAUDE.md`; undefined when neither is
 * there (or readable: a missing file is the common case, not an error).
 */
export function readProjectInstructions(workspace: string): ProjectInstructions | undefined {
  return readInstructionsIn(workspace, "");
}

/**
 * `AGENTS.md`, else `CLAUDE.md`, in the workspace directory `dir` (relative,
 * `/`-separated, "" for the root). A file whose real path leaves the workspace
 * (a symlink to `~/.ssh/…`) is not read: it would go to the model provider.
 */
export function readInstructionsIn(workspace: string, dir: string): ProjectInstructions | undefined {
  for (const name of INSTRUCTION_FILES) {
    const shown = dir === "" ? name : `${dir}/${name}`;
    const path = join(workspace, shown);
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue;
    }
    if (!inside(realpathSync(workspace), real)) continue;
    const read = readCapped(real, shown, "project");
    if (read) return read;
  }
  return undefined;
}

/**
 * Every agent's instructions, in the order they are given: the user's own
 * `AGENTS.md` in their config dir, then `AGENTS.md` (else `CLAUDE.md`) of each
 * directory from the workspace root down to `startDir`, where the user is.
 */
export function readInstructionChain(workspace: string, startDir: string, userConfigDir: string | undefined): ProjectInstructions[] {
  const chain: ProjectInstructions[] = [];
  if (userConfigDir !== undefined) {
    const path = join(userConfigDir, "AGENTS.md");
    const user = readCapped(path, path, "user");
    if (user) chain.push(user);
  }
  for (const dir of dirsDownTo(startDir)) {
    const found = readInstructionsIn(workspace, dir);
    if (found) chain.push(found);
  }
  return chain;
}

/** "", "pkg", "pkg/api" for `pkg/api`: the root first. */
export function dirsDownTo(dir: string): string[] {
  const parts = dir === "" ? [] : dir.split("/");
  return ["", ...parts.map((_, i) => parts.slice(0, i + 1).join("/"))];
}

function readCapped(path: string, file: string, scope: ProjectInstructions["scope"]): ProjectInstructions | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  if (bytes.length <= INSTRUCTIONS_MAX_BYTES) return { file, text: bytes.toString("utf8"), scope };
  return { file, text: cutUtf8(bytes, INSTRUCTIONS_MAX_BYTES), cutFromBytes: bytes.length, scope };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** At most `max` bytes, never ending inside a multi-byte character. */
function cutUtf8(bytes: Buffer, max: number): string {
  let end = max;
  // Continuation bytes are 10xxxxxx: step back to the start of the character cut in two.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString("utf8");
}
