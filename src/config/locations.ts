import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** The config files, lowest precedence first: each one's values override the one before. */
export const CONFIG_LEVELS = ["user", "project", "local"] as const;
export type ConfigLevel = (typeof CONFIG_LEVELS)[number];

export type ConfigLocations = Record<ConfigLevel, string>;

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
  // The XDG spec says a relative $XDG_CONFIG_HOME is invalid and must be ignored.
  const xdg = env.XDG_CONFIG_HOME;
  const configHome = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : join(home, ".config");
  return {
    user: join(configHome, "agent", "config.json"),
    project: join(workspace, ".agent", "config.json"),
    local: join(workspace, ".agent", "config.local.json"),
  };
}
