import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The config files, lowest precedence first: each one's values override the one before. */
export const CONFIG_LEVELS = ["user", "project", "local"] as const;
export type ConfigLevel = (typeof CONFIG_LEVELS)[number];

export type ConfigLocations = Record<ConfigLevel, string>;

/** Where the state lives when no flag or variable names it: config `stateRoot`, user level only (sessions/state-root.ts). */
export const STATE_ROOT_CHOICES = ["workspace", "user"] as const;
export type StateRootChoice = (typeof STATE_ROOT_CHOICES)[number];

/**
 * Where each level's file is (SPEC §7 "Where things live"): the user's in the XDG
 * config dir, the project's committed in `<workspace>/.agent/config.json`, the
 * local one beside it and kept out of git by `.agent/.gitignore`.
 */
export function configLocations(
  workspace: string,
  env: Record<string, string | undefined> = process.env,
  home: string = env.HOME || homedir(),
): ConfigLocations {
  return {
    user: join(userConfigDir(env, home), "config.json"),
    project: join(workspace, ".agent", "config.json"),
    local: join(workspace, ".agent", "config.local.json"),
  };
}

/** The user's own directory of agent files: `$XDG_CONFIG_HOME/agent`, else `~/.config/agent`. */
export function userConfigDir(env: Record<string, string | undefined> = process.env, home: string = env.HOME || homedir()): string {
  return join(xdgDir(env.XDG_CONFIG_HOME, join(home, ".config")), "agent");
}

/** Where state kept out of the workspaces lives (config `stateRoot: "user"`): `$XDG_STATE_HOME/agent`, else `~/.local/state/agent`. */
export function userStateDir(env: Record<string, string | undefined> = process.env, home: string = env.HOME || homedir()): string {
  return join(xdgDir(env.XDG_STATE_HOME, join(home, ".local", "state")), "agent");
}

// The XDG spec says a relative $XDG_*_HOME is invalid and must be ignored.
function xdgDir(value: string | undefined, fallback: string): string {
  return value !== undefined && value !== "" && isAbsolute(value) ? value : fallback;
}
