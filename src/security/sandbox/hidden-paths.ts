import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/**
 * The credentials files of common tools, relative to the home directory: what
 * a sandboxed command could use to act as the user elsewhere (PostgreSQL's
 * password and service files, netrc, SSH keys, cloud and GitHub tokens, the
 * Docker registry login, git's stored credentials).
 */
export const CREDENTIAL_PATHS = [".pgpass", ".pg_service.conf", ".netrc", ".ssh", ".aws", ".config/gh", ".docker/config.json", ".git-credentials"] as const;

/** A path the sandbox makes unreadable: an empty read-only tmpfs over a directory, /dev/null over a file. */
export interface HiddenPath {
  path: string;
  directory: boolean;
}

export interface HiddenPathsInput {
  home: string;
  /** The agent's user config directory: config.json, the session key, the trust store. */
  userConfigDir: string;
  /** Where state lives outside workspaces (`~/.local/state/agent`): every project's histories. */
  userStateDir: string;
  /** This run's state root: the histories and mailboxes of its agents. */
  stateRoot: string;
  /** `$XDG_CONFIG_HOME/gh` when XDG_CONFIG_HOME moves gh's config away from `~/.config`. */
  xdgConfigHome?: string;
  /** The config's `sandbox.hiddenPaths`, `~/` meaning the home directory; relative ones are refused by config loading. */
  extra?: readonly string[];
}

/**
 * What says who the user is, or lets a command act as them, as the paths to
 * hide from sandboxed commands: the agent's own (session key, trust store,
 * config, state), the common credentials files and the user's own list.
 */
export function hiddenPaths(input: HiddenPathsInput): string[] {
  return [
    input.userConfigDir,
    input.userStateDir,
    input.stateRoot,
    ...CREDENTIAL_PATHS.map((path) => join(input.home, path)),
    ...(input.xdgConfigHome !== undefined && isAbsolute(input.xdgConfigHome) ? [join(input.xdgConfigHome, "gh")] : []),
    ...(input.extra ?? []).map((path) => expandHome(path, input.home)),
  ];
}

/**
 * The paths as they are on disk when the sandbox is laid out: each at its real
 * path (a hidden `~/.ssh -> /keys` hides `/keys`), once; what does not exist is
 * left out, as bwrap can only mount over what is there.
 */
export function existingHiddenPaths(candidates: readonly string[]): HiddenPath[] {
  const seen = new Map<string, HiddenPath>();
  for (const candidate of candidates) {
    let real: string;
    try {
      real = realpathSync(candidate);
    } catch {
      continue; // not there: nothing to read
    }
    if (real === "/" || seen.has(real)) continue;
    seen.set(real, { path: real, directory: lstatSync(real).isDirectory() });
  }
  return [...seen.values()];
}

/** `~` and `~/x` as the home directory; anything else resolved as given. */
export function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  return path.startsWith("~/") ? join(home, path.slice(2)) : resolve(path);
}
