import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { AgentError } from "../core/errors.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { PathFence } from "../core/tool.ts";

/** A file tool was asked for a path outside the workspace (by `..`, an absolute path or a symlink). */
export class WorkspaceEscapeError extends AgentError {
  readonly code = "WORKSPACE_ESCAPE";
  readonly category = "usage" as const;
  constructor(
    readonly requested: string,
    readonly resolved: string,
    readonly workspace: string,
  ) {
    // The message goes to the model: it names the path it gave, not where a link leads (a probe of the
    // user's files) nor the user's directories; `resolved` and `workspace` stay on the error for logs.
    const viaLink = !escapes(relative(workspace, resolve(workspace, requested)));
    super(
      `path ${JSON.stringify(requested)} is outside the workspace${viaLink ? " (through a symbolic link)" : ""}; file tools only work on paths inside the workspace`,
    );
  }
}

/** Symlink hops followed before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * The real path `path` names, also when it does not exist yet: the nearest
 * existing ancestor is resolved and the missing rest appended. A dangling
 * symlink is followed to where it points, since writing through it would
 * create its target, wherever that is.
 */
export function realPathOf(path: string, hops = 0): string {
  try {
    return realpathSync(path);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  if (hops >= MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links at ${path}`);
  let isLink = false;
  try {
    isLink = lstatSync(path).isSymbolicLink();
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw error;
  }
  if (isLink) return realPathOf(resolve(dirname(path), readlinkSync(path)), hops + 1);
  const parent = dirname(path);
  // The root always exists, so this ends; `parent === path` only at the root.
  return parent === path ? path : join(realPathOf(parent, hops), basename(path));
}

export interface WorkspacePath {
  /** Absolute real path, inside the workspace. */
  absolute: string;
  /** Relative to the workspace, for messages to the model (`.` for the workspace itself). */
  display: string;
}

/** Whether a path relative to the workspace leads out of it. */
function escapes(rel: string): boolean {
  return rel === ".." || rel.startsWith("../") || isAbsolute(rel);
}

/**
 * Resolves a path the model gave (relative to the workspace, or absolute) to a
 * real path inside the workspace, or throws `WorkspaceEscapeError`. Symlinks are
 * resolved before the check, so a link inside pointing outside is refused. With
 * a fence, a path under the agent's state (as written or resolved) is refused too.
 */
export function resolveInWorkspace(workspace: string, path: string, fence?: PathFence): WorkspacePath {
  const root = realpathSync(workspace);
  fence?.assertOutsideState(path);
  const absolute = realPathOf(resolve(root, path));
  const rel = relative(root, absolute);
  if (escapes(rel)) throw new WorkspaceEscapeError(path, absolute, root);
  return { absolute, display: rel === "" ? "." : rel };
}
