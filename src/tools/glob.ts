import { statSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import { defineTool } from "./tool.ts";
import { resolveInWorkspace } from "./workspace-path.ts";

export const DEFAULT_GLOB_RESULTS = 500;

export const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern such as "**/*.ts" or "src/*.{js,json}", relative to `path`.'),
  path: z.string().min(1).optional().describe("Directory to search, relative to the workspace; default the workspace."),
});
export type GlobInput = z.infer<typeof GlobInput>;

export interface GlobToolOptions {
  maxResults?: number;
}

export function globTool(options: GlobToolOptions = {}) {
  const maxResults = options.maxResults ?? DEFAULT_GLOB_RESULTS;
  return defineTool({
    name: "glob",
    description:
      "List the files in the workspace matching a glob pattern, as paths relative to the workspace, sorted; " +
      `at most ${maxResults}. Hidden files and directories (.git, .env) only match a pattern that names them.`,
    input: GlobInput,
    effect: "read",
    subject: (input) => (input.path ? join(input.path, input.pattern) : input.pattern),
    async run(input, context) {
      // The scan itself must not leave the directory: a pattern is not a path the resolver checked.
      if (input.pattern.startsWith("/") || input.pattern.split("/").includes("..")) {
        throw new Error(
          `pattern ${JSON.stringify(input.pattern)} must be relative and stay below the search directory (no "/" at the start, no "..")`,
        );
      }
      const base = resolveInWorkspace(context.workspace, input.path ?? ".");
      if (!statSync(base.absolute).isDirectory()) throw new Error(`${base.display} is not a directory`);
      const root = resolveInWorkspace(context.workspace, ".").absolute;
      const matches: string[] = [];
      // followSymlinks stays off: a link to a directory outside would walk out of the workspace.
      for await (const file of new Bun.Glob(input.pattern).scan({ cwd: base.absolute, onlyFiles: true })) {
        if (context.signal.aborted) throw new Error("interrupted");
        matches.push(relative(root, join(base.absolute, file)));
      }
      if (matches.length === 0) return { content: `no files match ${JSON.stringify(input.pattern)} in ${base.display}` };
      matches.sort();
      const shown = matches.slice(0, maxResults).join("\n");
      if (matches.length <= maxResults) return { content: shown };
      return { content: `${shown}\n[… ${matches.length - maxResults} more files not shown; use a narrower pattern or path]` };
    },
  });
}
