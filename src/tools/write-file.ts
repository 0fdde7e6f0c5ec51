import { z } from "zod";
import { defineTool } from "../core/tool.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { type WriteGuards, checkedWrite } from "./checked-write.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const WriteFileInput = lazySchema(() =>
  z.strictObject({
    path: z.string().min(1).describe("File to write, relative to the workspace (or absolute inside it)."),
    content: z.string().describe("The whole new content of the file, written exactly as given."),
  }),
);
export type WriteFileInput = z.infer<typeof WriteFileInput>;

/** `ledger`: the session's file versions and journal; writes over a file the agent has not seen are refused. */
export function writeFileTool(files = new WorkspaceFiles(), guards: WriteGuards = {}) {
  const { ledger, ownership } = guards;
  return defineTool({
    name: "write_file",
    description:
      "Create or overwrite a file in the workspace with exactly `content`, creating missing parent directories. " +
      "To change part of an existing file, prefer edit_file. An existing file must have been read first (read_file), " +
      "and is refused if it changed since.",
    input: WriteFileInput,
    effect: "edit",
    subject: (input) => input.path,
    async run(input, context) {
      const bytes = Buffer.from(input.content, "utf8");
      const { display, created } = ledger
        ? await checkedWrite(files, ledger, context, "write_file", input.path, false, () => bytes, ownership && { check: ownership, input })
        : files.write(context, input.path, bytes);
      return { content: `${created ? "created" : "overwrote"} ${display} (${bytes.length} bytes)` };
    },
  });
}
