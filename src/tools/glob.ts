import { realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { z } from "zod";
import { isErrno } from "../storage/atomic-file.ts";
import { walkFiles } from "../search/file-walk.ts";
import { defineTool } from "../core/tool.ts";
import { searchRoots } from "./search-roots.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const DEFAULT_GLOB_RESULTS = 500;
export const GLOB_SORTS = ["mtime", "name"] as const;

export const GlobInput = lazySchema(() =>
  z.strictObject({
    pattern: z.string().min(1).describe('Glob pattern such as "**/*.ts" or "src/*.{js,json}", relative to `path`.'),
    path: z.string().min(1).optional().describe("Directory to search, relative to the workspace; default the workspace and any added directories."),
    include_ignored: z
      .boolean()
      .optional()
      .describe("Also list files that .gitignore and .ignore exclude (node_modules, build output); default false."),
    sort: z.enum(GLOB_SORTS).optional().describe('"mtime" (default): most recently modified first; "name": by path.'),
  }),
);
export type GlobInput = z.infer<typeof GlobInput>;

export interface GlobToolOptions {
  maxResults?: number;
}

const GLOB_CHARS = /[*?[\]{}!]/;

/**
 * The directory below `base` the pattern's leading literal segments name
 * ("src/tools" for "src/tools/**\/*.ts"), so the walk starts there; undefined
 * when it does not exist or is reached through a symbolic link, which a scan
 * does not follow.
 */
function literalStart(base: string, segments: string[]): string | undefined {
  const literal: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (GLOB_CHARS.test(segment)) break;
    literal.push(segment);
  }
  const start = join(base, ...literal);
  try {
    return realpathSync(start) === start && statSync(start).isDirectory() ? start : undefined;
  } catch (error) {
    if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return undefined;
    throw error;
  }
}

function mtimeOf(absolute: string): number {
  try {
    return statSync(absolute).mtimeMs;
  } catch {
    // Removed since it was listed: sorts last rather than failing the listing.
    return 0;
  }
}

export function globTool(options: GlobToolOptions = {}) {
  const maxResults = options.maxResults ?? DEFAULT_GLOB_RESULTS;
  return defineTool({
    name: "glob",
    description:
      "List the files in the workspace (and the directories added with --add-dir) matching a glob pattern, as paths relative to the workspace, " +
      `most recently modified first (sort: "name" for path order); at most ${maxResults}. ` +
      "Files that .gitignore and .ignore exclude are left out unless include_ignored is true; " +
      "hidden files and directories (.github, .env) only match a pattern that names them.",
    input: GlobInput,
    effect: "read",
    subject: (input) => (input.path ? join(input.path, input.pattern) : input.pattern),
    async run(input, context) {
      const pattern = input.pattern.replace(/^(\.\/)+/, "");
      const segments = pattern.split("/");
      // The scan itself must not leave the directory: a pattern is not a path the resolver checked.
      if (pattern.startsWith("/") || segments.includes("..")) {
        throw new Error(
          `pattern ${JSON.stringify(input.pattern)} must be relative and stay below the search directory (no "/" at the start, no "..")`,
        );
      }
      const roots = searchRoots(context, input.path);
      // The fence refuses a path in the state root, as written or resolved; the walk never enters it.
      const stateRoots = context.fence?.stateRoots ?? [];
      const where = roots.map((root) => root.target.display).join(", ");
      const none = { content: `no files match ${JSON.stringify(input.pattern)} in ${where}` };
      const matcher = new Bun.Glob(pattern);
      const matches: { path: string; absolute: string }[] = [];
      for (const root of roots) {
        if (!statSync(root.target.absolute).isDirectory()) throw new Error(`${root.target.display} is not a directory`);
        const start = literalStart(root.target.absolute, segments);
        if (start === undefined) continue;
        const inner = relative(root.workspace, root.target.absolute).split(sep).join("/");
        const baseRel = inner === "" ? "" : `${inner}/`;
        const files = walkFiles({
          workspace: root.workspace,
          start,
          respectIgnore: !(input.include_ignored ?? false),
          includeHidden: segments.some((segment) => segment.startsWith(".")),
          protectedRoots: stateRoots,
          signal: context.signal,
        });
        for await (const file of files) {
          if (matcher.match(file.path.slice(baseRel.length))) matches.push({ path: root.shown(file.path), absolute: file.absolute });
        }
      }
      if (matches.length === 0) return none;
      const byName = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
      if ((input.sort ?? "mtime") === "name") matches.sort(byName);
      else {
        const mtimes = new Map(matches.map((file) => [file.path, mtimeOf(file.absolute)]));
        matches.sort((a, b) => mtimes.get(b.path)! - mtimes.get(a.path)! || byName(a, b));
      }
      const shown = matches
        .slice(0, maxResults)
        .map((file) => file.path)
        .join("\n");
      if (matches.length <= maxResults) return { content: shown };
      return { content: `${shown}\n[… ${matches.length - maxResults} more files not shown; use a narrower pattern or path]` };
    },
  });
}
