import { readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { AgentDefinition } from "../agents/agent-definitions.ts";
import type { LoadedConfigFile } from "../config/config-file.ts";
import type { HookConfig } from "../config/config.ts";
import { isLooserMode } from "../config/modes.ts";
import { gatedSettings } from "../config/project-rules.ts";
import type { McpServers } from "../mcp/config.ts";
import { commandWords } from "../security/command-files.ts";

// What trusting a project would enable, and one hash over it: the settings the
// project files set that need trust (src/config/project-rules.ts), the teammate
// definitions that raise the permission mode (whole files), and the content of
// every workspace file a hook or stdio MCP command names. Editing any of them
// changes the hash, and a recorded trust no longer matches.

/** One thing the project would enable once trusted, as `agent trust` shows it. */
export interface TrustItem {
  /** The file it is set in, relative to the workspace (`.agent/config.json`). */
  source: string;
  key: string;
  value: unknown;
  effect: string;
  /** Workspace files the value runs (a hook's script), relative to the workspace; their content is in the hash. */
  covers: string[];
  /** Set for a teammate definition's `permissionMode`: the definition's name. */
  definition?: string;
}

export interface ProjectFingerprint {
  items: TrustItem[];
  /** `sha256:<hex>`; of nothing at all when `items` is empty. */
  hash: string;
}

export interface FingerprintInput {
  /** The workspace as given: the files' paths are under it. */
  workspace: string;
  /** Its real path: a command's file counts only when it really is inside. */
  realWorkspace: string;
  /** The project's and the local config file, as read (not narrowed). */
  files: LoadedConfigFile[];
  definitions: readonly AgentDefinition[];
  /** For `~/` in commands; the process's HOME when absent. */
  home?: string;
}

export function projectFingerprint({ workspace, realWorkspace, files, definitions, home = process.env.HOME ?? "/" }: FingerprintInput): ProjectFingerprint {
  const items: TrustItem[] = [];
  const contents: Record<string, string> = {};
  const cover = (words: string[], base: string) => {
    const found = workspaceFiles(words, base, realWorkspace);
    for (const path of found) contents[path] = sha256(readFileSync(resolve(realWorkspace, path)));
    return found;
  };
  for (const file of files) {
    const source = shown(workspace, file.path);
    for (const setting of gatedSettings(file.config)) {
      items.push({ source, ...setting, covers: coveredBy(setting.key, setting.value, cover, { workspace, home }) });
    }
  }
  for (const definition of definitions) {
    if (definition.permissionMode === undefined || !isLooserMode(definition.permissionMode, "default")) continue;
    const source = shown(workspace, definition.path);
    contents[source] = sha256(readFileSync(definition.path));
    items.push({
      source,
      key: "permissionMode",
      value: definition.permissionMode,
      effect: `teammates spawned as "${definition.name}" run under this permission mode`,
      covers: [],
      definition: definition.name,
    });
  }
  // What the settings are, not how this version words their effect: an upgrade must not end a trust.
  const settings = items.map(({ source, key, value }) => ({ source, key, value }));
  const hash = items.length === 0 ? "" : `sha256:${sha256(JSON.stringify({ settings, contents }))}`;
  return { items, hash };
}

/**
 * The workspace files a hook's or stdio MCP server's command names, with the
 * workspace's spellings (`$(pwd)`, `$PWD`, `$CLAUDE_PROJECT_DIR`) expanded as
 * the fence reads them (src/security/command-files.ts).
 */
function coveredBy(key: string, value: unknown, cover: (words: string[], base: string) => string[], at: { workspace: string; home: string }): string[] {
  const words = (line: string) => commandWords(line, at.workspace, at.home);
  if (key === "hooks") {
    const hooks = Object.values(value as Record<string, HookConfig[]>).flat();
    return unique(hooks.flatMap((hook) => cover(words(hook.command), at.workspace)));
  }
  if (key === "mcpServers") {
    return unique(
      Object.values(value as McpServers).flatMap((server) =>
        "command" in server ? cover([server.command, ...(server.args ?? [])].flatMap(words), resolve(at.workspace, server.cwd ?? ".")) : [],
      ),
    );
  }
  return [];
}

/** Of `candidates`, those that are regular files inside the workspace, relative to it. */
function workspaceFiles(candidates: string[], base: string, workspace: string): string[] {
  const found: string[] = [];
  for (const candidate of candidates) {
    let real: string;
    try {
      real = realpathSync(resolve(base, candidate));
      if (!statSync(real).isFile()) continue;
    } catch {
      continue; // not a file: a program on PATH, an option value, a word of the command
    }
    const inside = relative(workspace, real);
    if (inside !== "" && !inside.startsWith(`..${sep}`) && inside !== ".." && !isAbsolute(inside)) found.push(inside);
  }
  return found;
}

function shown(workspace: string, path: string): string {
  const inside = relative(workspace, path);
  return inside.startsWith("..") || isAbsolute(inside) ? path : inside;
}

function unique(list: string[]): string[] {
  return [...new Set(list)].sort();
}

function sha256(data: string | Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(data).digest("hex");
}
