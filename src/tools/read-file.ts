import { z } from "zod";
import { defineTool } from "../core/tool.ts";
import { capText, withTruncationNote } from "../core/truncate.ts";
import type { FileLedger } from "../file-journal/file-ledger.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const DEFAULT_READ_LINES = 2_000;
export const DEFAULT_READ_CHARS = 50_000;

export const ReadFileInput = lazySchema(() =>
  z.strictObject({
    path: z.string().min(1).describe("File to read, relative to the workspace (or absolute inside it)."),
    offset: z.number().int().positive().optional().describe("First line to return, 1-based; default 1."),
    limit: z.number().int().positive().optional().describe(`How many lines to return; default ${DEFAULT_READ_LINES}.`),
  }),
);
export type ReadFileInput = z.infer<typeof ReadFileInput>;

export interface ReadFileToolOptions {
  maxLines?: number;
  maxChars?: number;
  files?: WorkspaceFiles;
  /** The session's file versions: what the agent read is remembered, so it may then write it. */
  ledger?: FileLedger;
}

/** A NUL byte in the first 8 KiB is how git and grep tell binary from text, too. */
function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

export function readFileTool(options: ReadFileToolOptions = {}) {
  const maxLines = options.maxLines ?? DEFAULT_READ_LINES;
  const maxChars = options.maxChars ?? DEFAULT_READ_CHARS;
  const files = options.files ?? new WorkspaceFiles();
  return defineTool({
    name: "read_file",
    description:
      `Read a text file in the workspace: up to ${maxLines} lines from \`offset\` (1-based), ` +
      `cut after ${maxChars} characters. The text is returned exactly as stored, without line numbers; ` +
      "a note at the end says when there is more and which offset to continue from.",
    input: ReadFileInput,
    effect: "read",
    subject: (input) => input.path,
    async run(input, context) {
      const { bytes, display, stat } = files.read(context, input.path);
      if (bytes === null) throw new Error(`${display} is a directory; use glob to list files`);
      await options.ledger?.saw(context.identity, display, bytes, stat);
      if (looksBinary(bytes)) return { content: `${display} is a binary file (${bytes.length} bytes); not shown` };
      const lines = bytes.toString("utf8").split(/(?<=\n)/);
      const offset = input.offset ?? 1;
      if (offset > Math.max(lines.length, 1)) {
        const count = `${lines.length} line${lines.length === 1 ? "" : "s"}`;
        throw new Error(`offset ${offset} is past the end of ${display}, which has ${count}`);
      }
      const limit = Math.min(input.limit ?? maxLines, maxLines);
      const shown = lines.slice(offset - 1, offset - 1 + limit);
      const lastShown = offset - 1 + shown.length;
      const capped = capText(shown.join(""), maxChars);
      if (capped.omitted > 0) return { content: withTruncationNote(capped, "read fewer lines with offset/limit") };
      if (lastShown >= lines.length) return { content: capped.text };
      const more = `[lines ${offset}-${lastShown} of ${lines.length}; continue with offset ${lastShown + 1}]`;
      return { content: `${capped.text}${capped.text.endsWith("\n") ? "" : "\n"}${more}` };
    },
  });
}
