import { realpathSync } from "node:fs";
import { CONFIG_LEVELS, configLocations } from "../../config/locations.ts";
import { readConfigFile } from "../../config/config-file.ts";
import { ProtectedPaths, agentDirOf } from "../../security/protected-paths.ts";
import { GuardedWriter } from "../../workspace-files/guarded-writer.ts";
import { WorkspaceFiles } from "../../workspace-files/workspace-files.ts";

export interface RewindWriterOptions {
  /** The workspace (resolved to its real path here). */
  workspace: string;
  stateRoot: string;
  /** The `--add-dir` directories the session's last run recorded. */
  addDirs?: readonly string[];
  /** Guarded files the person named to be put back too (`--include-guarded`), relative to the workspace. */
  named?: readonly string[];
}

/**
 * The guarded writer `agent rewind` and `/rewind` put files back through, fenced
 * as the session's file tools are: the state root, git's files, the agent's
 * configuration, and every file a hook of any config file runs — trusted or
 * not: guarding one too many is a refusal, one too few a planted script.
 */
export function rewindWriter(options: RewindWriterOptions): GuardedWriter {
  const addDirs = options.addDirs ?? [];
  const workspace = realpathSync(options.workspace);
  const fence = new ProtectedPaths({
    workspace,
    stateRoot: options.stateRoot,
    agentDir: agentDirOf(workspace),
    hookCommands: configuredHookCommands(workspace),
    addDirs,
  });
  return new GuardedWriter(new WorkspaceFiles(), { workspace, addDirs }, fence, options.named ?? []);
}

function configuredHookCommands(workspace: string): string[] {
  const locations = configLocations(workspace);
  return CONFIG_LEVELS.flatMap((level) => {
    const hooks = readConfigFile(locations[level], level)?.config.hooks ?? {};
    return Object.values(hooks).flatMap((list) => (list ?? []).map((hook) => hook.command));
  });
}
