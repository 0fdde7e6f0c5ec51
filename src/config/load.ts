import { resolve } from "node:path";
import { ConfigError, UsageError } from "../core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES } from "../core/message.ts";
import { DEFAULT_JOURNAL_MAX_BYTES, DEFAULT_SHELL_SCAN_MAX_FILES } from "../file-journal/journal-records.ts";
import { DEFAULT_MCP_TOOL_TIMEOUT_MS, type McpSettings } from "../mcp/config.ts";
import { readMcpConfigs, readProjectMcpFile } from "./mcp-config-file.ts";
import type { ModelClientOptions } from "../model/types.ts";
import type { Pricing } from "../usage/pricing.ts";
import type { Isolation } from "../worktrees/teammate-worktree.ts";
import type { LeadMode, TaskToolsChoice } from "./modes.ts";
import { type LoadedConfigFile, readConfigFile } from "./config-file.ts";
import { type SandboxMode, parseSandboxMode } from "../security/sandbox/sandbox.ts";
import type { ConfigFile, HookConfig, HookEvent, PermissionMode, TeammatePanes } from "./config.ts";
import { CONFIG_LEVELS, type ConfigLevel, type ConfigLocations, configLocations } from "./locations.ts";
import { type ValueSource, parseBaseUrl, parseBudget, parseNonEmpty, parsePositiveInt } from "../core/values.ts";
import { parseApiVersion, parseLeadMode, parsePermissionMode, parseProfile, parseProvider, parseStore, parseTeammatePanes } from "./values.ts";
import { KEY_VARIABLES, type ProviderName, detectProvider } from "../model/providers/provider.ts";
import type { ProfileChoice } from "../model/profiles/chat-profile.ts";
import { FILES_STORE, type StoreSelection } from "../store/store-url.ts";
import type { EnvPolicy } from "../security/env-policy.ts";
import { mergeEnvPolicy } from "./env-policy-levels.ts";
import { registerConfigSecrets } from "./config-secrets.ts";
import { type GatedSetting, narrowProjectConfig } from "./project-rules.ts";

/** Everything a runtime needs to know, after flags, environment, config files and defaults are merged. */
export interface Settings {
  model: string;
  /** OpenAI-compatible endpoint; absent means the SDK's default (api.openai.com). */
  baseUrl?: string;
  /** The wire protocol: --provider or config provider, else from baseUrl's host. */
  provider: ProviderName;
  /** The endpoint's Chat Completions dialect; `auto` detects it from baseUrl's host. */
  profile: ProfileChoice;
  /** Azure OpenAI's `api-version` query parameter; the base URL's own query when absent. */
  apiVersion?: string;
  apiKey?: string;
  /** Extra HTTP headers for every model request, by name. */
  headers: Record<string, string>;
  /** Added to every agent's system prompt: the config files' texts, then --append-system-prompt. */
  appendSystemPrompt?: string;
  /** --system-prompt (flag only): the Lead's own prompt in place of the built-in one. */
  systemPrompt?: string;
  requestTimeoutMs: number;
  maxTurns: number;
  permissionMode: PermissionMode;
  permissions: { allow: string[]; deny: string[] };
  hooks: Partial<Record<HookEvent, HookConfig[]>>;
  /** Absent values mean the tool's own defaults (timeout 120 s, the built-in deny list); `env` is the environment policy of every command. */
  shell: { timeoutMs?: number; deny: string[]; env: EnvPolicy };
  /** `mode` absent: the default (workspace-write where the platform can enforce it). */
  /** `unixSockets`: from the user's config only; absent when none. */
  sandbox: { mode?: SandboxMode; network: boolean; explicit: boolean; unixSockets?: string[]; hiddenPaths?: string[] };
  /** Absent values mean the runner's own thresholds. */
  compaction: { thresholdChars?: number; largeToolResultChars?: number };
  mailbox: { maxContentBytes: number };
  /** The file journal: contents over `journalMaxBytes` are kept by hash only. */
  files: { journalMaxBytes: number; shellScanMaxFiles: number };
  /**
   * Teammates' defaults: `isolation` "none" (the shared workspace) or "worktree"; `autoClaim` (config `team.autoClaim`);
   * `midTurnDelivery` (config `team.midTurnDelivery`, default true); `taskTools` (config `team.taskTools`).
   */
  team: { isolation: Isolation; autoClaim: boolean; midTurnDelivery: boolean; taskTools: TaskToolsChoice };
  /** --lead-mode or config lead.mode: "delegate" leaves the Lead only coordination tools. */
  lead: { mode: LeadMode };
  /** MCP servers from config and --mcp-config files, and the client's settings. */
  mcp: McpSettings;
  /** Prices by model, merged across levels (a higher level's entry replaces a lower one's for its model). */
  pricing: Pricing;
  /** --max-budget-usd or config maxBudgetUsd; absent: no budget. */
  maxBudgetUsd?: number;
  /** Where the team's shared state lives (--store, AGENT_STORE, config store; default files). */
  store: StoreSelection;
  /** --remote-teammates or config remoteTeammates: the Lead's runtime runs no teammate itself. */
  remoteTeammates: boolean;
  /** --teammate-panes or config terminal.teammatePanes: "tmux" gives each teammate a tmux pane following it. */
  terminal: { teammatePanes: TeammatePanes };
  /** Absolute path of the --record cassette (flag only). */
  recordPath?: string;
  /** Absolute path of the --replay cassette (flag only). */
  replayPath?: string;
  /** The project's files applied whole (`agent trust`, --trust-project); else narrowed by src/config/project-rules.ts. */
  projectTrusted: boolean;
}

export const DEFAULTS = {
  model: "gpt-4o-mini",
  maxTurns: 50,
  requestTimeoutMs: 120_000,
  permissionMode: "default",
} as const satisfies Partial<Settings>;

/** The model when the provider is anthropic and none is named. */
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5";

/** Flag values exactly as typed on the command line; absent when not given. */
export interface SettingsFlags {
  model?: string;
  baseUrl?: string;
  provider?: string;
  profile?: string;
  apiVersion?: string;
  maxTurns?: string;
  permissionMode?: string;
  /** Permission rules from --allow / --deny, added after the config files'. */
  allow?: string[];
  deny?: string[];
  appendSystemPrompt?: string;
  systemPrompt?: string;
  record?: string;
  replay?: string;
  /** --mcp-config files (or inline JSON), added to config's mcpServers; later ones win for a name. */
  mcpConfig?: string[];
  maxBudgetUsd?: string;
  sandbox?: string;
  store?: string;
  remoteTeammates?: boolean;
  teammatePanes?: string;
  leadMode?: string;
}

export interface LoadSettingsInput {
  flags?: SettingsFlags;
  env?: Record<string, string | undefined>;
  /** Where the project's and the local config files are (`<workspace>/.agent/`). */
  workspace: string;
  /** Relative --record/--replay paths are taken from here (the user's cwd, not the workspace). */
  cwd?: string;
  /** The user's home, for `~/.config` when $XDG_CONFIG_HOME is unset. */
  home?: string;
  /**
   * The user trusts the project (src/trust/): its files apply whole. Otherwise
   * they may only narrow the user's settings, and what they set beyond that is
   * left out and listed in `ignored`.
   */
  projectTrusted?: boolean;
}

/** A project file's settings left out because the project is not trusted. */
export interface IgnoredSettings {
  level: ConfigLevel;
  path: string;
  settings: GatedSetting[];
}

/** Where one setting's value came from: the level and, within it, the flag, variable or file. */
export type SettingLevel = "flag" | "env" | ConfigLevel | "default";
export interface SettingSource {
  level: SettingLevel;
  /** `--model`, `AGENT_MODEL` or a file's path; absent for a default. */
  from?: string;
}

export interface LoadedSettings {
  settings: Settings;
  /** Every level's file path, whether it exists or not. */
  locations: ConfigLocations;
  /** The config files read, lowest precedence first (user, project, local). */
  files: LoadedConfigFile[];
  /**
   * Where each single-valued setting came from, by its key in the files
   * (`model`, `shell.timeoutMs`, `headers.X-Title`). The lists that add up
   * across levels (rules, hooks, shell.deny, appendSystemPrompt) are not here:
   * each file's own part is in `files`.
   */
  sources: Record<string, SettingSource>;
  /** Problems that do not stop the run (e.g. an apiKey in a world-readable file), one line each. */
  warnings: string[];
  /** By file, what an untrusted project set that was left out; empty when trusted. */
  ignored: IgnoredSettings[];
}

/**
 * Resolves the settings with precedence flags > environment > local > project >
 * user > defaults; rules, hooks, shell.deny and appendSystemPrompt add up across
 * levels (deny rules win over allow rules wherever they come from). Throws
 * UsageError/ConfigError (exit 2) for a bad flag, variable or file; creates
 * nothing on disk.
 */
export function loadSettings(input: LoadSettingsInput): LoadedSettings {
  const flags = input.flags ?? {};
  if (flags.record !== undefined && flags.replay !== undefined) {
    throw new UsageError("--record and --replay cannot be used together: record against a live endpoint, then replay the file");
  }
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const locations = configLocations(input.workspace, env, input.home);
  const read = projectInputFiles(CONFIG_LEVELS.map((level) => readConfigFile(locations[level], level)), input.workspace);
  const projectTrusted = input.projectTrusted === true;
  const ignored: IgnoredSettings[] = [];
  const user = read.find((file) => file.level === "user")?.config;
  // From here on an untrusted project's files hold only what they may set: nothing below can apply the rest.
  const files = read.map((file) => {
    if (file.level === "user" || projectTrusted) return file;
    const narrowed = narrowProjectConfig(file.config, user);
    if (narrowed.ignored.length > 0) ignored.push({ level: file.level, path: file.path, settings: narrowed.ignored });
    return { ...file, config: narrowed.config };
  });
  // Every credential in any file is masked, used or not (an ignored one too): an unused key is still not the model's to read.
  registerConfigSecrets(read);
  // Highest precedence first, for "the first level that sets it wins".
  const byPrecedence = [...files].reverse();
  const sources: Record<string, SettingSource> = {};

  // An empty variable (`OPENAI_BASE_URL= agent run …`) means "not set", as in most CLIs.
  const fromEnv = <T>(name: string, parse: (value: string, source: ValueSource) => T) => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : { value: parse(value, { env: name }), source: { level: "env", from: name } as const };
  };
  const fromFlag = <T>(value: string | undefined, flag: string, parse: (value: string, source: ValueSource) => T) =>
    value === undefined ? undefined : { value: parse(value, { flag }), source: { level: "flag", from: flag } as const };
  const fromFiles = <T>(get: (config: ConfigFile) => T | undefined) => {
    for (const file of byPrecedence) {
      const value = get(file.config);
      if (value !== undefined) return { value, source: { level: file.level, from: file.path } };
    }
    return undefined;
  };
  type Candidate<T> = () => { value: T; source: SettingSource } | undefined;
  /**
   * The first candidate that is set, its source recorded under `key`. Lazy: a
   * bad AGENT_MAX_TURNS does not matter when --max-turns overrides it.
   */
  function pick<T>(key: string, candidates: Candidate<T>[], fallback: T): T;
  function pick<T>(key: string, candidates: Candidate<T>[]): T | undefined;
  function pick<T>(key: string, candidates: Candidate<T>[], fallback?: T): T | undefined {
    for (const candidate of candidates) {
      const found = candidate();
      if (found === undefined) continue;
      sources[key] = found.source;
      return found.value;
    }
    if (fallback !== undefined) sources[key] = { level: "default" };
    return fallback;
  }
  const all = <T>(get: (config: ConfigFile) => T[] | undefined): T[] => files.flatMap((file) => get(file.config) ?? []);

  // What a level may not do even when trusted (a project's unsandboxed hook, a looser shell.env), one line each.
  const levelWarnings: string[] = [];
  // A socket reached from the sandbox acts as the user outside it: only the user's own config may allow one.
  const unixSockets = (): { unixSockets?: string[] } => {
    const paths: string[] = [];
    for (const file of files) {
      const listed = file.config.sandbox?.unixSockets;
      if (listed === undefined) continue;
      if (file.level !== "user") {
        levelWarnings.push(`${file.path}: sandbox.unixSockets ignored: only the user config (~/.config/agent/config.json) may let sandboxed commands reach a unix socket`);
        continue;
      }
      for (const path of listed) {
        if (!path.startsWith("/")) throw new ConfigError(`${file.path}: sandbox.unixSockets: ${JSON.stringify(path)} is not an absolute path; name each socket by its full path`);
        paths.push(path);
      }
    }
    return paths.length > 0 ? { unixSockets: paths } : {};
  };
  // Every level's list counts: hiding a path from commands only narrows what they see.
  const hiddenPaths = (): { hiddenPaths?: string[] } => {
    const paths: string[] = [];
    for (const file of files) {
      for (const path of file.config.sandbox?.hiddenPaths ?? []) {
        if (!path.startsWith("/") && path !== "~" && !path.startsWith("~/")) {
          throw new ConfigError(`${file.path}: sandbox.hiddenPaths: ${JSON.stringify(path)} is neither absolute nor under ~/; name each path in full`);
        }
        if (!paths.includes(path)) paths.push(path);
      }
    }
    return paths.length > 0 ? { hiddenPaths: paths } : {};
  };
  const sandboxSettings = (): Settings["sandbox"] => {
    const mode = pick<SandboxMode>("sandbox.mode", [
      () => fromFlag(flags.sandbox, "--sandbox", (value) => parseSandboxMode(value, "--sandbox")),
      () => fromFiles((c) => c.sandbox?.mode),
    ]);
    const network = pick<boolean>("sandbox.network", [() => fromFiles((c) => c.sandbox?.network)], false);
    return { ...(mode !== undefined ? { mode } : {}), network, explicit: mode !== undefined, ...unixSockets(), ...hiddenPaths() };
  };
  // The provider named decides which variable's URL applies: ANTHROPIC_BASE_URL (Claude Code's) for anthropic,
  // OPENAI_BASE_URL for the others; else the URL decides the provider.
  const named = pick<ProviderName>("provider", [() => fromFlag(flags.provider, "--provider", parseProvider), () => fromFiles((c) => c.provider)]);
  const baseUrl = pick("baseUrl", [
    () => fromFlag(flags.baseUrl, "--base-url", parseBaseUrl),
    () => fromEnv(named === "anthropic" ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL", parseBaseUrl),
    () => fromFiles((c) => c.baseUrl),
  ]);
  const provider = named ?? detectProvider(baseUrl);
  if (named === undefined) sources.provider = { level: "default" };
  const settings: Settings = {
    model: pick(
      "model",
      [() => fromFlag(flags.model, "--model", parseNonEmpty), () => fromEnv("AGENT_MODEL", parseNonEmpty), () => fromFiles((c) => c.model)],
      provider === "anthropic" ? ANTHROPIC_DEFAULT_MODEL : DEFAULTS.model,
    ),
    baseUrl,
    provider,
    profile: pick(
      "profile",
      [() => fromFlag(flags.profile, "--profile", parseProfile), () => fromFiles((c) => c.profile)],
      "auto" as ProfileChoice,
    ),
    apiVersion: pick("apiVersion", [() => fromFlag(flags.apiVersion, "--api-version", parseApiVersion), () => fromFiles((c) => c.apiVersion)]),
    // The provider's own variable: an OpenAI key is never sent to Anthropic, nor the other way round.
    apiKey: pick("apiKey", [() => fromEnv(KEY_VARIABLES[provider], (value) => value), () => fromFiles((c) => c.apiKey)]),
    headers: mergeHeaders(files, sources),
    appendSystemPrompt: joinParts([...files.map((file) => file.config.appendSystemPrompt), flags.appendSystemPrompt]),
    requestTimeoutMs: pick("requestTimeoutMs", [() => fromFiles((c) => c.requestTimeoutMs)], DEFAULTS.requestTimeoutMs),
    maxTurns: pick(
      "maxTurns",
      [() => fromFlag(flags.maxTurns, "--max-turns", parsePositiveInt), () => fromEnv("AGENT_MAX_TURNS", parsePositiveInt), () => fromFiles((c) => c.maxTurns)],
      DEFAULTS.maxTurns,
    ),
    permissionMode: pick(
      "permissionMode",
      [
        () => fromFlag(flags.permissionMode, "--permission-mode", parsePermissionMode),
        () => fromEnv("AGENT_PERMISSION_MODE", parsePermissionMode),
        () => fromFiles((c) => c.permissionMode),
      ],
      DEFAULTS.permissionMode as PermissionMode,
    ),
    permissions: {
      allow: [...all((c) => c.permissions?.allow), ...(flags.allow ?? [])],
      deny: [...all((c) => c.permissions?.deny), ...(flags.deny ?? [])],
    },
    hooks: mergeHooks(files, levelWarnings),
    shell: {
      timeoutMs: pick("shell.timeoutMs", [() => fromFiles((c) => c.shell?.timeoutMs)]),
      deny: all((c) => c.shell?.deny),
      env: mergeEnvPolicy(files, levelWarnings),
    },
    sandbox: sandboxSettings(),
    compaction: {
      thresholdChars: pick("compaction.thresholdChars", [() => fromFiles((c) => c.compaction?.thresholdChars)]),
      largeToolResultChars: pick("compaction.largeToolResultChars", [() => fromFiles((c) => c.compaction?.largeToolResultChars)]),
    },
    files: {
      journalMaxBytes: pick("files.journalMaxBytes", [() => fromFiles((c) => c.files?.journalMaxBytes)], DEFAULT_JOURNAL_MAX_BYTES),
      shellScanMaxFiles: pick("files.shellScanMaxFiles", [() => fromFiles((c) => c.files?.shellScanMaxFiles)], DEFAULT_SHELL_SCAN_MAX_FILES),
    },
    mailbox: {
      maxContentBytes: pick("mailbox.maxContentBytes", [() => fromFiles((c) => c.mailbox?.maxContentBytes)], DEFAULT_MAX_CONTENT_BYTES),
    },
    team: {
      isolation: pick("team.isolation", [() => fromFiles((c) => c.team?.isolation)], "none" as Isolation),
      autoClaim: pick("team.autoClaim", [() => fromFiles((c) => c.team?.autoClaim)], false),
      midTurnDelivery: pick("team.midTurnDelivery", [() => fromFiles((c) => c.team?.midTurnDelivery)], true),
      taskTools: pick("team.taskTools", [() => fromFiles((c) => c.team?.taskTools)], "self-claiming" as TaskToolsChoice),
    },
    lead: {
      mode: pick("lead.mode", [() => fromFlag(flags.leadMode, "--lead-mode", parseLeadMode), () => fromFiles((c) => c.lead?.mode)], "default" as LeadMode),
    },
    mcp: {
      // By name, a higher level's server replacing a lower one's; --mcp-config files last.
      servers: Object.assign({}, ...files.map((file) => file.config.mcpServers), readMcpConfigs(flags.mcpConfig ?? [], cwd)),
      sandboxed: workspaceServers(files, readMcpConfigs(flags.mcpConfig ?? [], cwd)),
      toolTimeoutMs: pick("mcp.toolTimeoutMs", [() => fromFiles((c) => c.mcp?.toolTimeoutMs)], DEFAULT_MCP_TOOL_TIMEOUT_MS),
    },
    pricing: Object.assign({}, ...files.map((file) => file.config.pricing)),
    maxBudgetUsd: pick("maxBudgetUsd", [
      () => fromFlag(flags.maxBudgetUsd, "--max-budget-usd", parseBudget),
      () => fromFiles((c) => c.maxBudgetUsd),
    ]),
    store: pick(
      "store",
      [
        () => fromFlag(flags.store, "--store", parseStore),
        () => fromEnv("AGENT_STORE", parseStore),
        () => {
          const found = fromFiles((c) => c.store);
          return found && { value: parseStore(found.value, { file: found.source.from }), source: found.source };
        },
      ],
      FILES_STORE,
    ),
    remoteTeammates: pick(
      "remoteTeammates",
      [
        () => (flags.remoteTeammates === true ? { value: true, source: { level: "flag", from: "--remote-teammates" } as const } : undefined),
        () => fromFiles((c) => c.remoteTeammates),
      ],
      false,
    ),
    terminal: {
      teammatePanes: pick(
        "terminal.teammatePanes",
        [() => fromFlag(flags.teammatePanes, "--teammate-panes", parseTeammatePanes), () => fromFiles((c) => c.terminal?.teammatePanes)],
        "off" as TeammatePanes,
      ),
    },
    recordPath: fromFlag(flags.record, "--record", (value, source) => resolve(cwd, parseNonEmpty(value, source)))?.value,
    replayPath: fromFlag(flags.replay, "--replay", (value, source) => resolve(cwd, parseNonEmpty(value, source)))?.value,
    projectTrusted,
  };
  if (flags.appendSystemPrompt !== undefined) parseNonEmpty(flags.appendSystemPrompt, { flag: "--append-system-prompt" });
  if (flags.systemPrompt !== undefined) settings.systemPrompt = parseNonEmpty(flags.systemPrompt, { flag: "--system-prompt" });
  if (settings.maxBudgetUsd === undefined) delete settings.maxBudgetUsd;
  // Settings that are absent stay absent (not `key: undefined`), so the object compares cleanly.
  for (const key of Object.keys(settings.compaction) as (keyof Settings["compaction"])[]) {
    if (settings.compaction[key] === undefined) delete settings.compaction[key];
  }
  return { settings, locations, files, sources, warnings: [...files.flatMap((file) => file.warnings), ...levelWarnings, ...userOnlyWarnings(files, locations.user)], ignored };
}

/**
 * The config files with the workspace's `.mcp.json` after the project's own:
 * `.agent/config.json` and `.agent/config.local.json` replace its servers by name.
 */
export function projectInputFiles(levels: (LoadedConfigFile | null)[], workspace: string): LoadedConfigFile[] {
  const files = levels.filter((file) => file !== null);
  const mcpFile = readProjectMcpFile(workspace);
  if (mcpFile === null) return files;
  const local = files.findIndex((file) => file.level === "local");
  return local === -1 ? [...files, mcpFile] : [...files.slice(0, local), mcpFile, ...files.slice(local)];
}

/**
 * `stateRoot` is read from the user's file only (state-root.ts): a repository
 * must not move the agent's state, so a project's or local file's is named and ignored.
 */
function userOnlyWarnings(files: LoadedConfigFile[], userFile: string): string[] {
  return files
    .filter((file) => file.level !== "user" && file.config.stateRoot !== undefined)
    .map((file) => `${file.path}: stateRoot ignored: it is read from the user config only (${userFile})`);
}

/** The servers whose definition in effect comes from the workspace's config (project or local), not the user's or a flag's. */
function workspaceServers(files: LoadedConfigFile[], fromFlags: Record<string, unknown>): string[] {
  const level = new Map<string, string>();
  for (const file of files) for (const name of Object.keys(file.config.mcpServers ?? {})) level.set(name, file.level);
  for (const name of Object.keys(fromFlags)) level.delete(name);
  return [...level].filter(([, from]) => from !== "user").map(([name]) => name);
}

/** Header names are case-insensitive: a higher level's `x-title` replaces a lower one's `X-Title`. */
function mergeHeaders(files: LoadedConfigFile[], sources: Record<string, SettingSource>): Record<string, string> {
  const merged = new Map<string, { name: string; value: string; source: SettingSource }>();
  for (const file of files) {
    for (const [name, value] of Object.entries(file.config.headers ?? {})) {
      merged.set(name.toLowerCase(), { name, value, source: { level: file.level, from: file.path } });
    }
  }
  const headers: Record<string, string> = {};
  for (const { name, value, source } of merged.values()) {
    headers[name] = value;
    sources[`headers.${name}`] = source;
  }
  return headers;
}

/**
 * Each event's hooks from every level, the user's first: all of them run. Only
 * the user's own config may take a hook out of the sandbox: a project's (or its
 * local file's) `"sandbox": false` is dropped with a warning.
 */
function mergeHooks(files: LoadedConfigFile[], warnings: string[]): Partial<Record<HookEvent, HookConfig[]>> {
  const hooks: Partial<Record<HookEvent, HookConfig[]>> = {};
  for (const file of files) {
    for (const [event, list] of Object.entries(file.config.hooks ?? {}) as [HookEvent, HookConfig[]][]) {
      const kept = list.map((hook) => {
        if (hook.sandbox !== false || file.level === "user") return hook;
        warnings.push(
          `${file.path}: hooks.${event} ${JSON.stringify(hook.command)} "sandbox": false ignored: only the user config can run a hook outside the sandbox; the hook runs sandboxed`,
        );
        const { sandbox: _ignored, ...rest } = hook;
        return rest;
      });
      hooks[event] = [...(hooks[event] ?? []), ...kept];
    }
  }
  return hooks;
}

function joinParts(parts: (string | undefined)[]): string | undefined {
  const present = parts.filter((part): part is string => part !== undefined && part.trim() !== "");
  return present.length === 0 ? undefined : present.join("\n\n");
}

/** The model client's part of the settings. */
export function modelClientOptions(settings: Settings): ModelClientOptions {
  const { model, baseUrl, provider, profile, apiVersion, apiKey, headers, requestTimeoutMs, recordPath, replayPath } = settings;
  return { model, baseUrl, provider, profile, apiVersion, apiKey, headers, timeoutMs: requestTimeoutMs, recordPath, replayPath };
}
