import { z } from "zod";
import { GREP_OUTPUT_MODES, MAX_GREP_FILE_BYTES, grepSearch } from "../search/grep-search.ts";
import { defineTool } from "../core/tool.ts";
import { capText, withTruncationNote } from "../core/truncate.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { searchRoots } from "./search-roots.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const DEFAULT_GREP_ENTRIES = 200;
export const MAX_GREP_ENTRIES = 2_000;
export const DEFAULT_GREP_CHARS = 50_000;
const MAX_CONTEXT = 20;

export const GrepInput = lazySchema(() =>
  z.strictObject({
    pattern: z
      .string()
      .min(1)
      .describe('JavaScript regular expression looked for in each line, e.g. "class \\\\w+Store" or "TODO|FIXME".'),
    path: z.string().min(1).optional().describe("File or directory to search, relative to the workspace; default the workspace and any added directories."),
    glob: z
      .string()
      .min(1)
      .optional()
      .describe('Only search files matching this glob: "*.ts" or "*.{ts,tsx}" match file names, "src/**/*.ts" paths below `path`.'),
    case_insensitive: z.boolean().optional().describe("Ignore case; default false."),
    context: z
      .number()
      .int()
      .min(0)
      .max(MAX_CONTEXT)
      .optional()
      .describe("Lines shown before and after each matching line (content mode only); default 0."),
    output_mode: z
      .enum(GREP_OUTPUT_MODES)
      .optional()
      .describe('"content" (default): matching lines as path:line:text; "files_with_matches": paths only; "count": path:matching-line-count.'),
    head_limit: z
      .number()
      .int()
      .positive()
      .max(MAX_GREP_ENTRIES)
      .optional()
      .describe(`Stop after this many output lines (files in the other modes); default ${DEFAULT_GREP_ENTRIES}.`),
  }),
);
export type GrepInput = z.infer<typeof GrepInput>;

export interface GrepToolOptions {
  maxChars?: number;
  /** Files larger than this are not searched (a note lists them); default MAX_GREP_FILE_BYTES. */
  maxFileBytes?: number;
  files?: WorkspaceFiles;
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MB` : `${bytes} bytes`;
}

const NARROW = "narrow the search with path, glob or a more specific pattern";

export function grepTool(options: GrepToolOptions = {}) {
  const maxChars = options.maxChars ?? DEFAULT_GREP_CHARS;
  const maxFileBytes = options.maxFileBytes ?? MAX_GREP_FILE_BYTES;
  const files = options.files ?? new WorkspaceFiles();
  return defineTool({
    name: "grep",
    description:
      "Search file contents in the workspace (and the directories added with --add-dir) for a JavaScript regular expression, line by line. " +
      "Skips binary files, .git/, the agent's state directory and whatever .gitignore and .ignore files exclude. " +
      `Output is capped (head_limit, default ${DEFAULT_GREP_ENTRIES}); a note says when there is more.`,
    input: GrepInput,
    effect: "read",
    subject: (input) => input.path ?? ".",
    async run(input, context) {
      const roots = searchRoots(context, input.path);
      // The fence refuses a path in the state root, as written or resolved; the walk never enters it.
      const stateRoots = context.fence?.stateRoots ?? [];
      const mode = input.output_mode ?? "content";
      const limit = input.head_limit ?? DEFAULT_GREP_ENTRIES;
      const result = { entries: [] as string[], truncated: false, skippedLarge: [] as string[] };
      for (const root of roots) {
        // Context groups of two roots are apart, as two files' are.
        const separator = (input.context ?? 0) > 0 && result.entries.length > 0 ? ["--"] : [];
        const room = limit - result.entries.length - separator.length;
        if (room <= 0) break;
        const opener = files.searchOpener({ workspace: root.workspace, ...(context.fence ? { fence: context.fence } : {}) });
        const found = await grepSearch({
          pattern: input.pattern,
          caseInsensitive: input.case_insensitive,
          workspace: root.workspace,
          start: root.target.absolute,
          glob: input.glob,
          mode,
          context: input.context,
          limit: room,
          protectedRoots: stateRoots,
          signal: context.signal,
          maxFileBytes,
          show: root.shown,
          ...(opener ? { openFile: opener.open } : {}),
        }).finally(() => opener?.close());
        if (found.entries.length > 0) result.entries.push(...separator, ...found.entries);
        result.skippedLarge.push(...found.skippedLarge);
        if (found.truncated) {
          result.truncated = true;
          break;
        }
      }
      const notes: string[] = [];
      if (result.truncated) {
        const unit = mode === "content" ? "lines" : "files";
        notes.push(
          `[stopped after ${limit} ${unit}; there are more matches: ${NARROW}` +
            (limit < MAX_GREP_ENTRIES ? `, or raise head_limit (up to ${MAX_GREP_ENTRIES})]` : "]"),
        );
      }
      if (result.skippedLarge.length > 0) {
        const shown = result.skippedLarge.slice(0, 5).join(", ");
        const more = result.skippedLarge.length > 5 ? ` and ${result.skippedLarge.length - 5} more` : "";
        notes.push(`[not searched, larger than ${formatBytes(maxFileBytes)}: ${shown}${more}]`);
      }
      if (result.entries.length === 0) {
        const searched = roots.map((root) => root.target.display).join(", ");
        const where = input.glob ? `${searched} (files matching ${JSON.stringify(input.glob)})` : searched;
        return { content: [`no matches for ${JSON.stringify(input.pattern)} in ${where}`, ...notes].join("\n") };
      }
      const capped = capText(result.entries.join("\n"), maxChars);
      const body = withTruncationNote(capped, NARROW);
      return { content: [body, ...notes].join("\n") };
    },
  });
}
