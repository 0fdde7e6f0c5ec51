import { isAbsolute, resolve } from "node:path";
import { SessionNotFoundError, UsageError } from "../core/errors.ts";
import { FileMailboxStore } from "../mailbox/file-store.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { SessionMeta } from "../sessions/session-meta.ts";
import { SessionStore } from "../sessions/session-store.ts";
import { defaultStateRoot } from "../sessions/state-root.ts";
import type { GlobalValues } from "./args.ts";
import { defaultWorkspace } from "../config/workspace-root.ts";

/**
 * `--state-dir`, else `$AGENT_STATE_DIR`, else the default state root of
 * `--workspace` (or the git root above the current directory, else the current
 * directory, as `agent run` takes it): `.agent/state` in it, refused when
 * it is a symlink (state-root.ts), or the user's own with config `stateRoot: "user"`.
 * Always absolute.
 */
export function resolveStateDir(
  globals: GlobalValues,
  env: Record<string, string | undefined> = process.env,
  cwd: string = process.cwd(),
): string {
  const flag = globals["state-dir"];
  if (flag !== undefined) {
    if (flag.length === 0) throw new UsageError("--state-dir needs a directory path, e.g. --state-dir ./.agent/state");
    return isAbsolute(flag) ? flag : resolve(cwd, flag);
  }
  const fromEnv = env.AGENT_STATE_DIR;
  if (fromEnv !== undefined && fromEnv.length > 0) return resolve(cwd, fromEnv);
  const workspace = globals.workspace;
  if (workspace !== undefined && workspace.length === 0) throw new UsageError("--workspace needs a directory path");
  return defaultStateRoot(workspace === undefined ? defaultWorkspace(resolve(cwd)) : resolve(cwd, workspace), env);
}

/** The session an admin command (mailbox, team, cron) works on, and its directory. */
export interface AdminSession {
  root: string;
  meta: SessionMeta;
  dir: string;
}

/**
 * `--session` (id, unique prefix or name), else the most recently used session;
 * undefined when the root has no session yet and none was named.
 */
export function findAdminSession(args: GlobalValues & { session?: string }): AdminSession | undefined {
  const root = resolveStateDir(args);
  const store = new SessionStore(root);
  const meta = args.session !== undefined ? store.find(args.session) : store.mostRecent();
  return meta && { root, meta, dir: store.dirOf(meta.id) };
}

/** Like findAdminSession, for commands that need a session: none is SessionNotFoundError (exit 6). */
export function requireAdminSession(args: GlobalValues & { session?: string }): AdminSession {
  const found = findAdminSession(args);
  if (!found) throw new SessionNotFoundError(undefined, resolveStateDir(args));
  return found;
}

/**
 * The session a message is sent into: the one named, else the most recent, else
 * a new one (an outside system may hand the Lead work before any run: `agent
 * drain` then takes it up).
 */
export function sendingSession(args: GlobalValues & { session?: string }): AdminSession {
  const found = findAdminSession(args);
  if (found) return found;
  const root = resolveStateDir(args);
  const store = new SessionStore(root);
  const meta = store.create();
  return { root, meta, dir: store.dirOf(meta.id) };
}

/** The one place the CLI builds its mailbox store, for commands that only read it. */
export function openMailboxStore(stateDir: string): MailboxStore {
  return new FileMailboxStore({ stateDir });
}

/**
 * The store for commands that send or recover: with the content cap the config
 * files of this workspace set, so the CLI judges sizes as the runtime does. The
 * config code is loaded only here: reading commands start without it.
 */
export async function openMailboxStoreAsConfigured(stateDir: string, workspace: string = defaultWorkspace(process.cwd())): Promise<MailboxStore> {
  const [{ readConfigFile }, { CONFIG_LEVELS, configLocations }] = await Promise.all([
    import("../config/config-file.ts"),
    import("../config/locations.ts"),
  ]);
  const locations = configLocations(workspace);
  let maxContentBytes: number | undefined;
  // Lowest precedence first: the last level that sets it wins.
  for (const level of CONFIG_LEVELS) {
    maxContentBytes = readConfigFile(locations[level], level)?.config.mailbox?.maxContentBytes ?? maxContentBytes;
  }
  return new FileMailboxStore({ stateDir, ...(maxContentBytes === undefined ? {} : { maxContentBytes }) });
}
