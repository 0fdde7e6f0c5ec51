import { resolve } from "node:path";
import { UsageError } from "../core/errors.ts";
import type { ModelClientOptions } from "../model/types.ts";
import { readConfigFile } from "./config-file.ts";
import type { ConfigFile, HookConfig, HookEvent, PermissionMode } from "./config.ts";
import { type ValueSource, parseBaseUrl, parseNonEmpty, parsePermissionMode, parsePositiveInt } from "./values.ts";

/** Everything a runtime needs to know, after flags, environment, config file and defaults are merged. */
export interface Settings {
  model: string;
  /** OpenAI-compatible endpoint; absent means the SDK's default (api.openai.com). */
  baseUrl?: string;
  apiKey?: string;
  requestTimeoutMs: number;
  maxTurns: number;
  permissionMode: PermissionMode;
  permissions: { allow: string[]; deny: string[] };
  hooks: Partial<Record<HookEvent, HookConfig[]>>;
  /** Absent values mean the tool's own defaults (timeout 120 s, the built-in deny list). */
  shell: { timeoutMs?: number; deny: string[] };
  /** Absent values mean the runner's own thresholds. */
  compaction: { thresholdChars?: number; largeToolResultChars?: number };
  /** Absolute path of the --record cassette (flag only). */
  recordPath?: string;
  /** Absolute path of the --replay cassette (flag only). */
  replayPath?: string;
}

export const DEFAULTS = {
  model: "gpt-4o-mini",
  maxTurns: 50,
  requestTimeoutMs: 120_000,
  permissionMode: "default",
} as const satisfies Partial<Settings>;

/** Flag values exactly as typed on the command line; absent when not given. */
export interface SettingsFlags {
  model?: string;
  baseUrl?: string;
  maxTurns?: string;
  permissionMode?: string;
  /** Permission rules from --allow / --deny, added after the config file's. */
  allow?: string[];
  deny?: string[];
  record?: string;
  replay?: string;
}

export interface LoadSettingsInput {
  flags?: SettingsFlags;
  env?: Record<string, string | undefined>;
  stateDir: string;
  /** Relative --record/--replay paths are taken from here (the user's cwd, not the workspace). */
  cwd?: string;
}

export interface LoadedSettings {
  settings: Settings;
  /** The config file read, or null when there was none. */
  configPath: string | null;
  /** Problems that do not stop the run (e.g. an apiKey in a world-readable file), one line each. */
  warnings: string[];
}

/**
 * Resolves the settings with precedence flags > environment > `<state-dir>/config.json`
 * > defaults. Throws UsageError/ConfigError (exit 2) for a bad flag, variable or file;
 * creates nothing on disk.
 */
export function loadSettings(input: LoadSettingsInput): LoadedSettings {
  const flags = input.flags ?? {};
  if (flags.record !== undefined && flags.replay !== undefined) {
    throw new UsageError("--record and --replay cannot be used together: record against a live endpoint, then replay the file");
  }
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const file = readConfigFile(input.stateDir);
  const config: ConfigFile = file?.config ?? {};

  // An empty variable (`OPENAI_BASE_URL= agent run …`) means "not set", as in most CLIs.
  const fromEnv = <T>(name: string, parse: (value: string, source: ValueSource) => T): T | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : parse(value, { env: name });
  };
  const fromFlag = <T>(value: string | undefined, flag: string, parse: (value: string, source: ValueSource) => T) =>
    value === undefined ? undefined : parse(value, { flag });

  const settings: Settings = {
    model:
      fromFlag(flags.model, "--model", parseNonEmpty) ??
      fromEnv("AGENT_MODEL", parseNonEmpty) ??
      config.model ??
      DEFAULTS.model,
    baseUrl: fromFlag(flags.baseUrl, "--base-url", parseBaseUrl) ?? fromEnv("OPENAI_BASE_URL", parseBaseUrl) ?? config.baseUrl,
    apiKey: fromEnv("OPENAI_API_KEY", (value) => value) ?? config.apiKey,
    requestTimeoutMs: config.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs,
    maxTurns:
      fromFlag(flags.maxTurns, "--max-turns", parsePositiveInt) ??
      fromEnv("AGENT_MAX_TURNS", parsePositiveInt) ??
      config.maxTurns ??
      DEFAULTS.maxTurns,
    permissionMode:
      fromFlag(flags.permissionMode, "--permission-mode", parsePermissionMode) ??
      fromEnv("AGENT_PERMISSION_MODE", parsePermissionMode) ??
      config.permissionMode ??
      DEFAULTS.permissionMode,
    permissions: {
      allow: [...(config.permissions?.allow ?? []), ...(flags.allow ?? [])],
      deny: [...(config.permissions?.deny ?? []), ...(flags.deny ?? [])],
    },
    hooks: config.hooks ?? {},
    shell: { timeoutMs: config.shell?.timeoutMs, deny: config.shell?.deny ?? [] },
    compaction: { ...config.compaction },
    recordPath: fromFlag(flags.record, "--record", (value, source) => resolve(cwd, parseNonEmpty(value, source))),
    replayPath: fromFlag(flags.replay, "--replay", (value, source) => resolve(cwd, parseNonEmpty(value, source))),
  };
  return { settings, configPath: file?.path ?? null, warnings: file?.warnings ?? [] };
}

/** The model client's part of the settings. */
export function modelClientOptions(settings: Settings): ModelClientOptions {
  const { model, baseUrl, apiKey, requestTimeoutMs, recordPath, replayPath } = settings;
  return { model, baseUrl, apiKey, timeoutMs: requestTimeoutMs, recordPath, replayPath };
}
