import { statSync } from "node:fs";
import { isAbsolute, join, normalize, relative, resolve } from "node:path";
import type { Tool } from "../core/tool.ts";
import type { FileWrite } from "../security/shell-command/analyse.ts";
import { realPathOf } from "../security/workspace-path.ts";

/**
 * The subjects path rules are matched against: the path as written, normalised
 * and made relative to the workspace (so `./src/a.ts`, `src/x/../a.ts` and
 * `/ws/src/a.ts` all meet `write_file(src/**)`), and the path after symlinks
 * are resolved (so `envlink -> .env` meets `write_file(.env)`), when that is
 * inside the workspace.
 */
export function pathSubjects(subject: string, workspace: string): { written: string; real: string | undefined; absolute: string; resolved: string | undefined } {
  const absolute = resolve(workspace, subject);
  const written = relativeSubject(absolute, workspace) ?? normalize(subject);
  let resolved: string | undefined;
  try {
    resolved = realPathOf(absolute);
  } catch {
    resolved = undefined;
  }
  const real = resolved === undefined ? undefined : relativeSubject(resolved, workspace);
  return { written, real: real === written ? undefined : real, absolute, resolved };
}

function relativeSubject(absolute: string, workspace: string): string | undefined {
  const rel = relative(workspace, absolute);
  if (rel.startsWith("..") || isAbsolute(rel)) return isAbsolute(rel) ? undefined : rel;
  return rel === "" ? "" : rel.replace(/\/$/, "");
}

/** Kept for callers that want the single subject rules see for a call (the path as written). */
export function ruleSubject(tool: Tool, input: unknown, workspace: string): string {
  const subject = tool.subject(input);
  if (tool.effect === "execute" || subject === "") return subject;
  return pathSubjects(subject, workspace).written;
}

/** Where a write lands: `cp a.txt dir` writes `dir/a.txt` when dir is a directory. */
export function landing(write: FileWrite, workspace: string): string {
  const path = write.path as string;
  if (write.into === undefined) return path;
  if (path.endsWith("/")) return join(path, write.into);
  try {
    if (statSync(resolve(workspace, path)).isDirectory()) return join(path, write.into);
  } catch {
    // Not there: the write creates the file as named.
  }
  return path;
}
