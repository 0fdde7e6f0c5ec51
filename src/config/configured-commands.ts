import type { Settings } from "./load.ts";

// The commands the settings run on their own — hooks and stdio MCP servers —
// as the fence and the sandbox read them to guard the files they name.

/** Every hook's command line. */
export function hookCommandLines(settings: Pick<Settings, "hooks">): string[] {
  return Object.values(settings.hooks).flatMap((list) => (list ?? []).map((hook) => hook.command));
}

/** The configured stdio MCP servers' commands. */
export function stdioCommands(settings: Pick<Settings, "mcp">): { command: string; args?: string[]; cwd?: string }[] {
  return Object.values(settings.mcp.servers).filter((server) => "command" in server);
}
