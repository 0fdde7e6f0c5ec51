import { isAbsolute, relative, resolve, sep } from "node:path";
import type { PathFence } from "../core/tool.ts";

// `--add-dir DIR` (claude -p's): more directories the file tools may use
// besides the workspace. A path that resolves into one is opened beneath that
// directory's descriptor, as a workspace path is beneath the workspace's, and
// is shown relative to the workspace (`../lib/x.ts`), so the file journal and
// the agent's file versions never take it for a workspace file of the same name.

/** What a file tool's scope may carry beyond the workspace: the real, absolute added directories. */
export interface AddedDirsScope {
  workspace: string;
  fence?: PathFence;
  addDirs?: readonly string[];
  links?: "follow" | "refuse";
  approvedGuarded?: (absolute: string) => boolean;
}

export interface AddedRoot {
  /** The scope to open `path` in: the added directory as its root. */
  scope: Omit<AddedDirsScope, "addDirs">;
  /** The path, absolute. */
  path: string;
  /** Maps a display relative to the added directory to one relative to the workspace. */
  shown(display: string): string;
}

/** The added directory `path` is in, when it is outside the workspace; undefined otherwise (the usual case). */
export function addedRootOf(scope: AddedDirsScope, path: string): AddedRoot | undefined {
  if (scope.addDirs === undefined || scope.addDirs.length === 0) return undefined;
  const absolute = resolve(scope.workspace, path);
  if (within(scope.workspace, absolute)) return undefined;
  const dir = scope.addDirs.find((candidate) => within(candidate, absolute));
  if (dir === undefined) return undefined;
  return {
    // The same terms as the workspace's: its fence, and a replay's links and named files.
    scope: {
      workspace: dir,
      ...(scope.fence ? { fence: scope.fence } : {}),
      ...(scope.links ? { links: scope.links } : {}),
      ...(scope.approvedGuarded ? { approvedGuarded: scope.approvedGuarded } : {}),
    },
    path: absolute,
    shown: (display) => relative(scope.workspace, resolve(dir, display)),
  };
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
