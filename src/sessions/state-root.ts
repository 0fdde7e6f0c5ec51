import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import { type StateRootChoice, configLocations, userStateDir } from "../config/locations.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { StateRootRedirectedError } from "./session-errors.ts";

type Env = Record<string, string | undefined>;

/**
 * The state root of `workspace` when none is named by --state-dir or
 * AGENT_STATE_DIR (SPEC §8 "State only this user wrote"): `<workspace>/.agent/state`,
 * refused when a repository could have planted or redirected it; or, with
 * `stateRoot: "user"` in the user's config, a directory of the user's own
 * outside every workspace.
 */
export function defaultStateRoot(workspace: string, env: Env = process.env, home?: string): string {
  if (userStateRootChoice(env, home) === "user") return userStateRoot(workspace, env, home);
  const root = join(workspace, ".agent", "state");
  assertOwnStateRoot(workspace, root);
  return root;
}

/**
 * `$XDG_STATE_HOME/agent/projects/<slug>-<hash>/`: the slug (the workspace's
 * name) for people, the hash of its real path so two checkouts named alike do
 * not share sessions.
 */
export function userStateRoot(workspace: string, env: Env = process.env, home?: string): string {
  const real = realPathOrSelf(workspace);
  const slug = basename(real).toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "").slice(0, 40) || "root";
  const hash = new Bun.CryptoHasher("sha256").update(real).digest("hex").slice(0, 16);
  return join(userStateDir(env, home), "projects", `${slug}-${hash}`);
}

/**
 * Throws StateRootRedirectedError (exit 5) when `.agent/`, the state root, any
 * directory between them or its `sessions/` is a symlink (or not a directory), or the state root
 * resolves outside the workspace: a repository ships those, and the agent's
 * state, sandbox layout and locks must never follow them. A part not there yet
 * is fine: the runtime creates it as a directory.
 */
export function assertOwnStateRoot(workspace: string, root: string): void {
  let path = workspace;
  // `sessions/` too: every new session is made in it.
  for (const part of [...relative(workspace, root).split(sep), "sessions"]) {
    path = join(path, part);
    let stats;
    try {
      stats = lstatSync(path);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return;
      throw error;
    }
    if (stats.isSymbolicLink()) throw new StateRootRedirectedError(root, path, "is a symlink");
    if (!stats.isDirectory()) throw new StateRootRedirectedError(root, path, "is not a directory");
  }
  const inside = relative(realPathOrSelf(workspace), realPathOrSelf(root));
  if (inside.startsWith("..") || isAbsolute(inside)) throw new StateRootRedirectedError(root, root, "resolves outside the workspace");
}

/**
 * Config `stateRoot` as the user's own config file sets it. Read by hand, not
 * through the config loader: every admin command needs the state root, and
 * the loader's zod is most of a reading command's start-up. A file the loader
 * would refuse counts as unset here; `agent run` reports it.
 */
export function userStateRootChoice(env: Env = process.env, home?: string): StateRootChoice {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(configLocations("/", env, home).user, "utf8"));
  } catch {
    return "workspace";
  }
  const value = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>).stateRoot : undefined;
  return value === "user" ? "user" : "workspace";
}

function realPathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
