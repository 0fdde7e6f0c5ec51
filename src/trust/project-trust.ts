import { realpathSync } from "node:fs";
import { relative } from "node:path";
import { AgentDefinitions } from "../agents/agent-definitions.ts";
import { readConfigFile } from "../config/config-file.ts";
import { type LoadSettingsInput, type LoadedSettings, loadSettings, projectInputFiles } from "../config/load.ts";
import { configLocations, userConfigDir } from "../config/locations.ts";
import type { PermissionMode } from "../config/config.ts";
import { isLooserMode } from "../config/modes.ts";
import { ConfigError } from "../core/errors.ts";
import { type ProjectFingerprint, type TrustItem, projectFingerprint } from "./fingerprint.ts";
import { type TrustEntry, TrustStore } from "./trust-store.ts";

// The one place that decides whether a workspace's own files apply whole:
// --trust-project, AGENT_TRUST_PROJECT=1, or the user's recorded consent to
// exactly these settings. Config loading narrows an untrusted project's files
// (src/config/project-rules.ts); hooks, MCP and teammate definitions only ever
// see what config loading kept.

export const TRUST_ENV = "AGENT_TRUST_PROJECT";

export interface TrustInput {
  workspace: string;
  env?: Record<string, string | undefined>;
  home?: string;
  /** --trust-project. */
  trustProject?: boolean;
}

export interface ProjectTrust {
  /** The workspace's real path: the key of its entry in trust.json. */
  realPath: string;
  fingerprint: ProjectFingerprint;
  trusted: boolean;
  /** Why it is trusted: the flag, the variable, or a recorded decision matching the fingerprint. */
  by?: "flag" | "env" | "recorded";
  /** The user's recorded decision, whether it still matches or not. */
  recorded?: TrustEntry;
  store: TrustStore;
}

/** Whether the workspace is trusted, and what trusting it would enable. Reads files only. */
export function resolveProjectTrust(input: TrustInput): ProjectTrust {
  const env = input.env ?? process.env;
  const realPath = realpathSync(input.workspace);
  const locations = configLocations(input.workspace, env, input.home);
  const files = projectInputFiles([readConfigFile(locations.project, "project"), readConfigFile(locations.local, "local")], input.workspace);
  const fingerprint = projectFingerprint({
    workspace: input.workspace,
    realWorkspace: realPath,
    files,
    definitions: AgentDefinitions.load(input.workspace).definitions,
    ...((input.home ?? env.HOME) !== undefined ? { home: (input.home ?? env.HOME)! } : {}),
  });
  const store = new TrustStore(userConfigDir(env, input.home));
  const recorded = store.get(realPath);
  const base = { realPath, fingerprint, store, ...(recorded ? { recorded } : {}) };
  if (input.trustProject === true) return { ...base, trusted: true, by: "flag" };
  if (envTrust(env)) return { ...base, trusted: true, by: "env" };
  const matches = recorded?.decision === "trusted" && recorded.fingerprint === fingerprint.hash;
  return matches ? { ...base, trusted: true, by: "recorded" } : { ...base, trusted: false };
}

function envTrust(env: Record<string, string | undefined>): boolean {
  const value = env[TRUST_ENV];
  if (value === undefined || value === "" || value === "0" || value === "false") return false;
  if (value === "1" || value === "true") return true;
  throw new ConfigError(`invalid ${TRUST_ENV}=${JSON.stringify(value)} in the environment: expected 1 (trust the project's settings) or 0; fix or unset it`);
}

export interface TrustedSettings extends LoadedSettings {
  trust: ProjectTrust;
  /** Everything an untrusted project set that does not apply (config keys and teammate definitions' modes). */
  ignoredItems: TrustItem[];
}

/**
 * The settings of a workspace as its trust allows: loadSettings with the
 * project trusted or not, plus one warning per project file naming what was
 * left out and the command that trusts it.
 */
export function loadWorkspaceSettings(input: LoadSettingsInput & { trustProject?: boolean; cwd?: string }): TrustedSettings {
  const trust = resolveProjectTrust(input);
  const loaded = loadSettings({ ...input, projectTrusted: trust.trusted });
  const ignoredItems: TrustItem[] = [];
  for (const file of loaded.ignored) {
    const source = relative(input.workspace, file.path);
    for (const setting of file.settings) ignoredItems.push({ source, ...setting, covers: [] });
  }
  if (!trust.trusted) {
    // Definitions looser than the mode the Lead ends up in: the runtime gives their teammates the Lead's mode.
    for (const item of trust.fingerprint.items) {
      if (item.definition !== undefined && isLooserMode(item.value as PermissionMode, loaded.settings.permissionMode)) ignoredItems.push(item);
    }
  }
  const warnings = [...loaded.warnings, ...ignoredWarnings(ignoredItems, trust, input.workspace, input.cwd ?? process.cwd())];
  return { ...loaded, warnings, trust, ignoredItems };
}

/** One line per file: what was ignored, and how to trust it. */
function ignoredWarnings(items: TrustItem[], trust: ProjectTrust, workspace: string, cwd: string): string[] {
  const bySource = new Map<string, TrustItem[]>();
  for (const item of items) bySource.set(item.source, [...(bySource.get(item.source) ?? []), item]);
  const changed = trust.recorded?.decision === "trusted" ? " (trusted before, but its settings changed since)" : "";
  const how = `\`${trustCommandLine(workspace, cwd)}\` shows them and trusts them (or pass --trust-project, or set ${TRUST_ENV}=1)`;
  return [...bySource].map(([source, list]) => `project not trusted${changed}: ignoring ${list.map(named).join(", ")} from ${source}; ${how}`);
}

/** `agent trust`, with --workspace when the workspace is not the current directory. */
export function trustCommandLine(workspace: string, cwd: string): string {
  return workspace === cwd ? "agent trust" : `agent trust --workspace ${shellQuote(workspace)}`;
}

function named(item: TrustItem): string {
  return typeof item.value === "string" || typeof item.value === "boolean" ? `${item.key} ${JSON.stringify(item.value)}` : item.key;
}

function shellQuote(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
