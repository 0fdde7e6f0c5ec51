import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { UsageError } from "../../core/errors.ts";
import { type GlobalValues } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { defaultStateRoot } from "../../sessions/state-root.ts";
import { defaultWorkspace } from "../../config/workspace-root.ts";

/**
 * The workspace as a real path: `--workspace`, else the git root above the
 * current directory, else the current directory. The file tools compare real
 * paths to keep the agent inside it, so a symlinked workspace is resolved once, here.
 */
export function resolveWorkspace(flag: string | undefined, cwd: string = process.cwd()): string {
  if (flag !== undefined && flag.length === 0) throw new UsageError("--workspace needs a directory path");
  const path = flag === undefined ? defaultWorkspace(resolve(cwd)) : resolve(cwd, flag);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw new UsageError(`workspace ${path} does not exist; create it or pass an existing directory with --workspace`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`workspace ${path} is not a directory; pass a directory with --workspace`);
  return real;
}

/**
 * `--state-dir`, else `$AGENT_STATE_DIR`, else `<workspace>/.agent/state` (SPEC §7;
 * refused when a symlink, SPEC §8) or the user's own (config `stateRoot: "user"`):
 * the state root follows the workspace.
 */
export function runStateDir(
  globals: GlobalValues,
  workspace: string,
  env: Record<string, string | undefined> = process.env,
  cwd: string = process.cwd(),
): string {
  const explicit = globals["state-dir"] !== undefined || (env.AGENT_STATE_DIR ?? "") !== "";
  return explicit ? resolveStateDir(globals, env, cwd) : defaultStateRoot(workspace, env);
}

/**
 * `--add-dir` values as real, absolute directories outside the workspace (one
 * inside it adds nothing and is dropped); a missing one is a UsageError.
 */
export function resolveAddDirs(values: readonly string[] | undefined, workspace: string, cwd: string = process.cwd()): string[] {
  const dirs: string[] = [];
  for (const value of values ?? []) {
    if (value.length === 0) throw new UsageError("--add-dir needs a directory path");
    const path = resolve(cwd, value);
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new UsageError(`--add-dir ${path} does not exist; create it or give an existing directory`);
    }
    if (!statSync(real).isDirectory()) throw new UsageError(`--add-dir ${path} is not a directory; give a directory`);
    const inside = relative(workspace, real);
    if (inside === "" || (inside !== ".." && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))) continue;
    if (!dirs.includes(real)) dirs.push(real);
  }
  return dirs;
}
