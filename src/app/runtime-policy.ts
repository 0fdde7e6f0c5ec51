import { PermissionPolicy } from "../permissions/policy.ts";
import { ProtectedPaths, agentDirOf } from "../security/protected-paths.ts";
import type { ShellToolOptions } from "../tools/shell.ts";
import { stdioCommands } from "../config/configured-commands.ts";
import type { RuntimeBase } from "./runtime-context.ts";
import type { RuntimeHooks } from "./runtime-hooks.ts";

/** What every agent's calls pass: the fence around the agent's own state, the permission rules, and how shell commands run. */
export interface RuntimePolicy {
  fence: ProtectedPaths;
  policy: PermissionPolicy;
  shellOptions: ShellToolOptions;
}

export function wirePolicy({ settings, context }: RuntimeBase, hooks: RuntimeHooks): RuntimePolicy {
  // The agent's own state and configuration are not its to touch (docs/security.md).
  const fence = new ProtectedPaths({
    workspace: context.workspace,
    stateRoot: context.stateRoot ?? context.stateDir,
    agentDir: agentDirOf(context.workspace),
    hookCommands: hooks.commands,
    mcpCommands: stdioCommands(settings),
    ...(context.addDirs ? { addDirs: context.addDirs } : {}),
  });
  const policy = new PermissionPolicy({
    mode: settings.permissionMode,
    allow: settings.permissions.allow,
    deny: settings.permissions.deny,
    ask: hooks.asker,
    protected: fence,
  });
  const shellOptions = { ...settings.shell, ...(context.sandbox ? { sandbox: context.sandbox } : {}) };
  return { fence, policy, shellOptions };
}
