import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { defineTool } from "../core/tool.ts";
import { resolveInWorkspace } from "../security/workspace-path.ts";

export const WriteFileInput = z.strictObject({
  path: z.string().min(1).describe("File to write, relative to the workspace (or absolute inside it)."),
  content: z.string().describe("The whole new content of the file, written exactly as given."),
});
export type WriteFileInput = z.infer<typeof WriteFileInput>;

export function writeFileTool() {
  return defineTool({
    name: "write_file",
    description:
      "Create or overwrite a file in the workspace with exactly `content`, creating missing parent directories. " +
      "To change part of an existing file, prefer edit_file.",
    input: WriteFileInput,
    effect: "edit",
    subject: (input) => input.path,
    async run(input, context) {
      const { absolute, display } = resolveInWorkspace(context.workspace, input.path, context.fence);
      const existed = existsSync(absolute);
      mkdirSync(dirname(absolute), { recursive: true });
      // A plain write, not temp-and-rename: the file keeps its inode, mode and
      // hard links, as when a person saves it in an editor.
      writeFileSync(absolute, input.content);
      const bytes = Buffer.byteLength(input.content, "utf8");
      return { content: `${existed ? "overwrote" : "created"} ${display} (${bytes} bytes)` };
    },
  });
}
