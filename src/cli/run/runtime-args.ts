import type { ArgsDef } from "citty";
import { PERMISSION_MODES } from "../../config/config.ts";
import { type Settings, type SettingsFlags, loadSettings } from "../../config/load.ts";
import { parseDuration } from "../../core/duration.ts";
import { UsageError } from "../../core/errors.ts";
import { agentDirOf } from "../../security/protected-paths.ts";
import { registerSecret } from "../../security/redact.ts";
import { SANDBOX_MODES, type Sandbox, resolveSandbox } from "../../security/sandbox/sandbox.ts";
import type { GlobalValues } from "../args.ts";
import { repeatedValues } from "../argv.ts";
import type { ProgressLevel } from "./progress.ts";
import { lastMessagePath } from "./last-message.ts";
import { OUTPUT_FORMATS, type OutputFormat } from "./result-json.ts";
import { resolveWorkspace, runStateDir } from "./workspace.ts";

// The flags of every command that runs the Lead (`run`, `drain`, the interactive
// session), and how they become settings: one definition, so the commands cannot
// drift apart.

/** Where the runtime works and how it reaches the model. */
export const runtimeArgs = {
  workspace: { type: "string", valueHint: "dir", description: "Directory the agent works in (default: the current directory)" },
  model: { type: "string", valueHint: "name", description: "Model name (default: $AGENT_MODEL, config, else gpt-4o-mini)" },
  "base-url": { type: "string", valueHint: "url", description: "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, config, else OpenAI)" },
  "max-turns": { type: "string", valueHint: "n", description: "Model calls allowed per Lead or teammate turn (default: 50)" },
  "permission-mode": { type: "enum", options: [...PERMISSION_MODES], description: "What tools may do without asking (default: default)" },
  allow: { type: "string", valueHint: "rule", description: "Allow calls matching a rule, e.g. 'shell(npm test*)'; may be repeated; adds to config" },
  deny: { type: "string", valueHint: "rule", description: "Deny calls matching a rule, e.g. 'write_file(.env)'; may be repeated; wins over allow" },
  "append-system-prompt": { type: "string", valueHint: "text", description: "Add this to every agent's system prompt, after the config's appendSystemPrompt" },
  record: { type: "string", valueHint: "file", description: "Append every model request and response to this JSONL cassette" },
  replay: { type: "string", valueHint: "file", description: "Answer model requests from this cassette, with no network" },
  "mcp-config": { type: "string", valueHint: "file", description: "Load MCP servers from a JSON file ({\"mcpServers\": {...}}); may be repeated; adds to config" },
  "wait-lock": { type: "boolean", description: "Wait for another runtime using the state dir to finish instead of failing" },
  sandbox: {
    type: "enum",
    options: [...SANDBOX_MODES],
    description: "OS sandbox for shell commands (default: workspace-write where available; see docs/security.md)",
  },
} as const satisfies ArgsDef;

/** What a headless command prints and how long it may take. */
export const headlessArgs = {
  output: { type: "enum", options: [...OUTPUT_FORMATS], default: "text", description: "What stdout carries" },
  timeout: { type: "string", valueHint: "duration", description: "Stop the whole command after this long, e.g. 90s, 10m, or 60 (seconds)" },
  quiet: { type: "boolean", description: "Print nothing on stderr but errors" },
  "include-partial-messages": {
    type: "boolean",
    description: "With --output stream-json: also print each piece of an answer as it streams in (assistant_delta lines)",
  },
  "output-last-message": { type: "string", valueHint: "file", description: "Also write the final answer to this file (when the run succeeds)" },
} as const satisfies ArgsDef;

/** `--verbose` of a headless command, which also means more progress. */
export const verboseArg = {
  verbose: { type: "boolean", description: "Show every tool result, model turn, mailbox move and retry; stack traces with errors" },
} as const satisfies ArgsDef;

export interface RuntimeValues extends GlobalValues {
  workspace?: string;
  model?: string;
  "base-url"?: string;
  "max-turns"?: string;
  "permission-mode"?: string;
  allow?: string | string[];
  deny?: string | string[];
  "append-system-prompt"?: string;
  record?: string;
  replay?: string;
  "mcp-config"?: string | string[];
  "wait-lock"?: boolean;
  sandbox?: string;
}

export interface HeadlessValues extends RuntimeValues {
  output?: string;
  timeout?: string;
  quiet?: boolean;
  "include-partial-messages"?: boolean;
  "output-last-message"?: string;
}

export interface RuntimeSetup {
  workspace: string;
  stateDir: string;
  settings: Settings;
  /** Problems that do not stop the command, one line each. */
  warnings: string[];
  waitLock: boolean;
  /** Where `shell` runs (probed once per command). */
  sandbox: Sandbox;
}

export interface HeadlessSetup extends RuntimeSetup {
  format: OutputFormat;
  level: ProgressLevel;
  timeout: { ms: number; text: string } | undefined;
  includePartialMessages: boolean;
  /** Absolute path of --output-last-message. */
  lastMessagePath?: string;
}

/**
 * The workspace, state dir and merged settings the flags name; usage errors before anything runs.
 * `rawArgs` (citty's, normalised) carries every value of the repeatable options; without it only `args`' are seen.
 */
export function runtimeSetup(args: RuntimeValues, rawArgs?: readonly string[]): RuntimeSetup {
  const workspace = resolveWorkspace(args.workspace);
  const stateDir = runStateDir(args, workspace);
  const { settings, warnings } = loadSettings({
    workspace,
    flags: settingsFlags(args, rawArgs),
  });
  registerSecret(settings.apiKey);
  // Credentials configured as extra model-request headers are masked like the key.
  for (const [name, value] of Object.entries(settings.headers)) if (/auth|key|token|secret/i.test(name)) registerSecret(value.replace(/^(?:bearer|basic)\s+/i, ""));
  const resolved = resolveSandbox({
    ...settings.sandbox,
    workspace,
    agentDir: agentDirOf(workspace),
    stateRoot: stateDir,
  });
  if (resolved.warning) warnings.push(resolved.warning);
  return { workspace, stateDir, settings, warnings, waitLock: args["wait-lock"] === true, sandbox: resolved.sandbox };
}

/** The flags that are settings, as loadSettings takes them. */
export function settingsFlags(args: RuntimeValues, rawArgs?: readonly string[]): SettingsFlags {
  const list = (name: "allow" | "deny" | "mcp-config") => (rawArgs ? repeatedValues(rawArgs, name) : asList(args[name]));
  return {
    model: args.model,
    baseUrl: args["base-url"],
    maxTurns: args["max-turns"],
    permissionMode: args["permission-mode"],
    allow: list("allow"),
    deny: list("deny"),
    appendSystemPrompt: args["append-system-prompt"],
    record: args.record,
    replay: args.replay,
    mcpConfig: list("mcp-config"),
    sandbox: args.sandbox,
  };
}

export function headlessSetup(args: HeadlessValues, rawArgs?: readonly string[]): HeadlessSetup {
  if (args.quiet && args.verbose) throw new UsageError("--quiet and --verbose contradict each other; give one");
  const timeout = args.timeout === undefined ? undefined : { ms: parseTimeout(args.timeout), text: args.timeout };
  const includePartialMessages = args["include-partial-messages"] === true;
  if (includePartialMessages && args.output !== "stream-json") {
    throw new UsageError("--include-partial-messages needs --output stream-json: text output streams the answer by itself on a terminal");
  }
  return {
    ...runtimeSetup(args, rawArgs),
    format: (args.output ?? "text") as OutputFormat,
    level: args.quiet ? "quiet" : args.verbose ? "verbose" : "normal",
    timeout,
    includePartialMessages,
    lastMessagePath: lastMessagePath(args["output-last-message"]),
  };
}

/** A repeatable option: citty gives one value as a string, several as an array. */
function asList(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value : [value];
}

/** `90s`, `10m`, `1h30m`; a bare number is seconds (`--timeout 60`), as GNU timeout reads it. */
export function parseTimeout(text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text.trim()) : undefined;
  const ms = seconds === undefined ? parseDuration(text) : Math.round(seconds * 1000);
  if (ms <= 0) throw new UsageError(`--timeout must be longer than 0, e.g. --timeout 10m`);
  return ms;
}
