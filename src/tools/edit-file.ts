import { z } from "zod";
import { defineTool } from "../core/tool.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { type WriteGuards, checkedWrite } from "./checked-write.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const EditFileInput = lazySchema(() =>
  z.strictObject({
    path: z.string().min(1).describe("File to edit, relative to the workspace (or absolute inside it)."),
    old_string: z.string().min(1).describe("Exact text to replace, including whitespace; must occur exactly once unless replace_all."),
    new_string: z.string().describe("Text to put in its place."),
    replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring a unique one; default false."),
  }),
);
export type EditFileInput = z.infer<typeof EditFileInput>;

function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count += 1;
  return count;
}

/** `ledger`: the session's file versions and journal; edits of a file the agent has not seen are refused. */
export function editFileTool(files = new WorkspaceFiles(), guards: WriteGuards = {}) {
  const { ledger, ownership } = guards;
  return defineTool({
    name: "edit_file",
    description:
      "Replace `old_string` with `new_string` in a file in the workspace. `old_string` must match exactly once " +
      "(add surrounding lines to make it unique), or set `replace_all` to replace every occurrence. " +
      "The file must have been read first (read_file), and is refused if it changed since.",
    input: EditFileInput,
    effect: "edit",
    subject: (input) => input.path,
    async run(input, context) {
      if (input.old_string === input.new_string) throw new Error("old_string and new_string are identical; nothing to change");
      let count = 0;
      const change = (bytes: Buffer, display: string) => {
        // Decoding must be lossless, or writing back would corrupt bytes the edit never touched.
        let text: string;
        try {
          text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
        } catch (error) {
          if (error instanceof TypeError) throw new Error(`${display} is not UTF-8 text; edit_file cannot change it`);
          throw error;
        }
        count = countOccurrences(text, input.old_string);
        if (count === 0) throw new Error(`old_string was not found in ${display}; read the file and copy the text exactly`);
        if (count > 1 && !input.replace_all) {
          throw new Error(
            `old_string occurs ${count} times in ${display}; include more surrounding text to make it unique, or set replace_all`,
          );
        }
        // split/join, not String.replace: `$&` and friends in new_string must stay literal.
        return Buffer.from(text.split(input.old_string).join(input.new_string), "utf8");
      };
      const { display } = ledger
        ? await checkedWrite(files, ledger, context, "edit_file", input.path, true, (display, current) => change(current!, display), ownership && { check: ownership, input })
        : files.edit(context, input.path, change);
      return { content: `replaced ${count} occurrence${count === 1 ? "" : "s"} in ${display}` };
    },
  });
}
