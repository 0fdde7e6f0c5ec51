import { realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";

// Where the user is: run from `repo/pkg`, the workspace is the repository
// (`../x` is the project's too, and the sandbox binds the git root) and `pkg`
// is where the agent starts looking.

/** The nearest directory at or above `dir` holding `.git` (a directory, or the file of a worktree or submodule). */
export function gitRootAbove(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    try {
      statSync(join(current, ".git"));
      return current;
    } catch {
      // not here: one level up
    }
    if (dirname(current) === current) return undefined;
  }
}

/** The workspace when no `--workspace` is given: the git root above `cwd`, else `cwd` itself. */
export function defaultWorkspace(cwd: string): string {
  return gitRootAbove(cwd) ?? cwd;
}

/**
 * Where the user started the agent, relative to the (real) workspace: `pkg/api`
 * from `repo/pkg/api`; "" at the root, or when the current directory is not
 * inside the workspace at all (`--workspace` elsewhere).
 */
export function startDirIn(workspace: string, cwd: string): string {
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    return "";
  }
  const inside = relative(workspace, real);
  if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return "";
  return inside.split(sep).join("/");
}
