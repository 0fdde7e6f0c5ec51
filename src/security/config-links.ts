import { readdirSync } from "node:fs";
import { join, normalize } from "node:path";
import { type ConfiguredCommand, configuredCommandFiles } from "./command-files.ts";
import { realPathOf } from "./workspace-path.ts";

/** What the agent reads as configuration in a workspace, relative to it (`.agent/config*.json` is listed from the directory). */
const CONFIG_ENTRIES = [".mcp.json", ".agent/config.json", ".agent/config.local.json", ".agent/agents", ".agent/skills", "skills"];

/**
 * Where the workspace's configuration really is when it is not where it is
 * named: the real path each config file, `.mcp.json` and the agents and skills
 * directories resolve to (a dangling link's target included, as a write there
 * creates it). A model that cannot write `.agent/config.json` must not write
 * `../agentcfg.json` that it links to either.
 */
export function configLinkTargets(root: string): string[] {
  const targets = new Set<string>();
  for (const entry of [...CONFIG_ENTRIES, ...agentConfigFiles(root)]) {
    const named = normalize(join(root, entry));
    let real: string;
    try {
      real = realPathOf(named);
    } catch {
      continue; // a link loop: nothing can be written through it
    }
    if (real !== named) targets.add(real);
  }
  return [...targets];
}

/** `.agent/config*.json` names present in the workspace (`config.ci.json` and the like). */
function agentConfigFiles(root: string): string[] {
  try {
    return readdirSync(join(root, ".agent"))
      .filter((name) => /^config.*\.json$/.test(name))
      .map((name) => join(".agent", name));
  } catch {
    return [];
  }
}

/**
 * What the sandbox binds read-only besides `.agent/` and `.git`: in the
 * workspace and each added directory `.mcp.json`, `skills/` and where config
 * links to, and every file a hook or stdio MCP server runs. Those that do not
 * exist cannot be bound, and are left out by the sandbox.
 */
export function guardedConfigPaths(input: {
  workspace: string;
  addDirs?: readonly string[];
  home: string;
  hookCommands: readonly string[];
  mcpCommands: readonly ConfiguredCommand[];
}): string[] {
  const roots = [input.workspace, ...(input.addDirs ?? [])];
  return [
    ...new Set([
      ...roots.flatMap((root) => [join(root, ".mcp.json"), join(root, "skills"), ...configLinkTargets(root)]),
      ...configuredCommandFiles(input),
    ]),
  ];
}
