import { homedir } from "node:os";
import type { Settings } from "../../config/load.ts";
import { userConfigDir, userStateDir } from "../../config/locations.ts";
import { hiddenPaths } from "../../security/sandbox/hidden-paths.ts";
import { guardedConfigPaths } from "../../security/config-links.ts";
import { hookCommandLines, stdioCommands } from "../../config/configured-commands.ts";
import { agentDirOf } from "../../security/protected-paths.ts";
import type { SandboxRequest } from "../../security/sandbox/sandbox.ts";
import { storeSocketDir } from "../../store/store-url.ts";

/**
 * What the sandbox is asked for, from the settings and the agent's environment:
 * the mode, the workspace and what stays read-only in it, and where host sockets
 * live that commands must not reach (the runtime dir, the store's socket dir).
 * One place, so `agent doctor` probes what a run would use.
 */
export function sandboxRequest(settings: Settings, workspace: string, stateRoot: string, env: NodeJS.ProcessEnv, addDirs: readonly string[] = []): SandboxRequest {
  const storeDir = storeSocketDir(settings.store);
  const runtimeDir = env.XDG_RUNTIME_DIR;
  const { hiddenPaths: extra, ...sandbox } = settings.sandbox;
  const home = env.HOME || homedir();
  // Who the user is stays out of reach: the session key and trust store, every agent's state, credentials files.
  const concealed = hiddenPaths({
    home,
    userConfigDir: userConfigDir(env, home),
    userStateDir: userStateDir(env, home),
    stateRoot,
    ...(env.XDG_CONFIG_HOME !== undefined ? { xdgConfigHome: env.XDG_CONFIG_HOME } : {}),
    ...(extra !== undefined ? { extra } : {}),
  });
  // The agent's configuration outside `.agent/`, and what its hooks and servers run, are not the commands' to change.
  const guarded = guardedConfigPaths({ workspace, addDirs, home, hookCommands: hookCommandLines(settings), mcpCommands: stdioCommands(settings) });
  return {
    ...sandbox,
    workspace,
    concealed,
    guarded,
    ...(addDirs.length > 0 ? { addDirs } : {}),
    agentDir: agentDirOf(workspace),
    stateRoot,
    hostSocketDirs: [runtimeDir, storeDir].filter((dir): dir is string => dir !== undefined && dir.startsWith("/")),
    ...(env.PATH !== undefined ? { searchPath: env.PATH } : {}),
  };
}
