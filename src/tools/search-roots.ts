import type { ToolContext } from "../core/tool.ts";
import { type WorkspacePath, resolveInWorkspace } from "../security/workspace-path.ts";
import { addedRootOf } from "../workspace-files/added-dirs.ts";

// Where glob and grep look: the workspace, and the `--add-dir` directories as
// the other file tools reach them. A search in an added directory walks it as
// its own root (its ignore files, its descriptor) and its paths are shown
// relative to the workspace (`../shared/a.ts`), the same paths read_file and
// edit_file take and show.

export interface SearchRoot {
  /** Real path of the root the walk treats as its workspace: the workspace or an added directory. */
  workspace: string;
  /** What to search, inside `workspace`; its display is relative to the workspace the model sees. */
  target: WorkspacePath;
  /** Maps a path relative to `workspace` to the one shown to the model. */
  shown(path: string): string;
}

const same = (path: string) => path;

/**
 * The roots to search for `path` (as the model gave it): the one it names, in
 * the workspace or an added directory; without a path, the workspace and then
 * every added directory.
 */
export function searchRoots(context: ToolContext, path: string | undefined): SearchRoot[] {
  if (path !== undefined) {
    const added = addedRootOf(context, path);
    if (added === undefined) {
      const target = resolveInWorkspace(context.workspace, path, context.fence);
      return [{ workspace: resolveInWorkspace(context.workspace, ".").absolute, target, shown: same }];
    }
    const root = added.scope.workspace;
    const inside = resolveInWorkspace(root, added.path, context.fence);
    return [{ workspace: root, target: { ...inside, display: added.shown(inside.display) }, shown: (p) => added.shown(p) }];
  }
  const workspace = resolveInWorkspace(context.workspace, ".");
  const roots: SearchRoot[] = [{ workspace: workspace.absolute, target: workspace, shown: same }];
  for (const dir of context.addDirs ?? []) {
    const added = addedRootOf(context, dir);
    if (added === undefined) continue;
    roots.push({ workspace: dir, target: { absolute: dir, display: added.shown(".") }, shown: (p) => added.shown(p) });
  }
  return roots;
}
