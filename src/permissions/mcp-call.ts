/**
 * What permission rules see of an MCP tool call. The server's annotations
 * (`readOnlyHint`) are the server's claim, so rules look at the arguments
 * themselves: a pattern is matched against their canonical JSON, and an
 * argument whose name says it is a path is a file the call may change.
 */

/** JSON with object keys sorted at every level and no spaces: one text per value, whatever order the model wrote. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Argument names that hold a path: `path`, `file`, `filename`, `file_path`, `filePath`, `destination`, `paths`, `*_path`, `*Path`… */
const PATH_ARGUMENT = /^(?:paths?|files?|file_?names?|file_?paths?|dir|directory|dest|destination|target|source|src|out|output)$|(?:_path|Path|_file|File|_dir|Dir)s?$/i;

/** Every string under a path-named argument, at the top level or nested (`{edits: [{path}]}`), with the argument's name. */
export function pathArguments(input: unknown): Array<{ name: string; path: string }> {
  const found: Array<{ name: string; path: string }> = [];
  const visit = (value: unknown, name: string | undefined) => {
    if (typeof value === "string") {
      if (name !== undefined && PATH_ARGUMENT.test(name) && value !== "") found.push({ name, path: value.replace(/^file:\/\//, "") });
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, name);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) visit(item, key);
    }
  };
  visit(input, undefined);
  return found;
}
