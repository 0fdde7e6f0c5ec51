import { priceOf } from "../../usage/cost.ts";
import type { Settings, SettingsFlags } from "../../config/load.ts";
import { loadWorkspaceSettings } from "../../trust/project-trust.ts";
import { PANES_NEED_TMUX, TmuxPanes } from "../terminal/tmux-panes.ts";
import { parseDuration } from "../../core/duration.ts";
import { UsageError } from "../../core/errors.ts";
import { registerSecret } from "../../security/redact.ts";
import { type Sandbox, resolveSandbox, resolveSandboxInBackground } from "../../security/sandbox/sandbox.ts";
import type { RunFlags } from "../../sessions/run-flags.ts";
import { type SessionPlan, planSession } from "../../sessions/session-plan.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import type { GlobalValues } from "../args.ts";
import { repeatedValues } from "../argv.ts";
import type { ProgressLevel } from "./progress.ts";
import { lastMessagePath } from "./last-message.ts";
import type { OutputFormat } from "./result-json.ts";
import { resolveWorkspace, runStateDir } from "./workspace.ts";
import { startDirIn } from "../../config/workspace-root.ts";
import { resolveAddDirs } from "./workspace.ts";
import { sandboxRequest } from "./sandbox-request.ts";
import type { CompatValues, InputFormat } from "./compat-flags.ts";
import { type AnswerSchema, answerSchema } from "./structured-output.ts";
import { claudeToolRules } from "./compat-tools.ts";

export { headlessArgs, runtimeArgs, sessionArgs, trustProjectArg, verboseArg } from "./runtime-flags.ts";

// The flags of every command that runs the Lead (`run`, `drain`, the interactive
// session), and how they become settings: one definition, so the commands cannot
// drift apart.

export interface RuntimeValues extends GlobalValues {
  workspace?: string;
  model?: string;
  "base-url"?: string;
  provider?: string;
  profile?: string;
  "api-version"?: string;
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
  "max-budget-usd"?: string;
  store?: string;
  "remote-teammates"?: boolean;
  "lead-mode"?: string;
  "teammate-panes"?: string;
  "trust-project"?: boolean;
  continue?: boolean;
  resume?: string;
  session?: string;
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
  /** Where the user is, relative to the workspace ("" at its root): instructions are read down to it. */
  startDir: string;
  /** `--add-dir` directories, real and absolute, outside the workspace: file tools and the sandbox reach them too. */
  addDirs: string[];
  /** The state root: `<root>/sessions/<id>/` is each session's state dir. */
  stateRoot: string;
  /** The session the runtime takes; a new one is created only once the run starts. */
  session: SessionPlan;
  settings: Settings;
  /** Problems that do not stop the command, one line each. */
  warnings: string[];
  waitLock: boolean;
  /** Where `shell` runs (probed once per command). */
  sandbox: Sandbox;
  /**
   * With the probe in the background (`agent run`, `drain`): settles once the
   * sandbox is known, with the warning to print when it cannot start; await it
   * before the first command can run. Absent: `sandbox` was probed already.
   */
  sandboxWarning?: Promise<string | undefined>;
  /** The permission flags of the command line, recorded in the session when its runtime starts (for `agent drain`). */
  runFlags: RunFlags;
}

/** Whose event shapes stream-json lines take: ours (`--output stream-json`), Claude Code's (`--output-format stream-json`) or codex exec's (`--json`). */
export type EventShapes = "agent" | "claude" | "codex";

export interface HeadlessSetup extends RuntimeSetup {
  format: OutputFormat;
  events: EventShapes;
  /** `stream-json`: the user turns come as JSON lines on stdin (`--input-format stream-json`). */
  inputFormat: InputFormat;
  /** The JSON Schema the final answer must satisfy (--json-schema, --output-schema). */
  answerSchema?: AnswerSchema;
  level: ProgressLevel;
  timeout: { ms: number; text: string } | undefined;
  includePartialMessages: boolean;
  /** Absolute path of --output-last-message. */
  lastMessagePath?: string;
}

/**
 * The workspace, state root, session and merged settings the flags name; usage
 * errors (and an unknown session, exit 6) before anything runs. `session`
 * overrides the plan the session flags give (`agent drain` picks its own). `rawArgs`
 * (citty's, normalised) carries every value of the repeatable options; without it only `args`' are seen.
 */
export function runtimeSetup(
  args: RuntimeValues & CompatValues,
  rawArgs?: readonly string[],
  session?: (store: SessionStore) => SessionPlan,
  options: { probeInBackground?: boolean } = {},
): RuntimeSetup {
  const workspace = resolveWorkspace(args.workspace);
  const stateRoot = runStateDir(args, workspace);
  const flags = settingsFlags(args, rawArgs);
  const { settings, warnings } = loadWorkspaceSettings({
    workspace,
    flags,
    trustProject: args["trust-project"] === true,
  });
  // A budget needs a price: without one every call would cost "nothing" and the budget never bite.
  if (settings.maxBudgetUsd !== undefined && priceOf(settings.pricing, settings.model) === undefined) {
    throw new UsageError(
      `a budget (maxBudgetUsd or --max-budget-usd) needs a price, and model ${JSON.stringify(settings.model)} has an unknown price: add it to config "pricing" (see docs/observability.md)`,
    );
  }
  registerSecret(settings.apiKey);
  // Credentials configured as extra model-request headers are masked like the key.
  for (const [name, value] of Object.entries(settings.headers)) if (/auth|key|token|secret/i.test(name)) registerSecret(value.replace(/^(?:bearer|basic)\s+/i, ""));
  const addDirs = resolveAddDirs(rawArgs ? repeatedValues(rawArgs, "add-dir") : asList(args["add-dir"]), workspace);
  const request = sandboxRequest(settings, workspace, stateRoot, process.env, addDirs);
  const resolved = options.probeInBackground ? resolveSandboxInBackground(request) : resolveSandbox(request);
  if (typeof resolved.warning === "string") warnings.push(resolved.warning);
  if (settings.terminal.teammatePanes === "tmux" && !TmuxPanes.available(process.env)) warnings.push(PANES_NEED_TMUX);
  const store = new SessionStore(stateRoot);
  const plan = session
    ? session(store)
    : planSession(store, { continue: args.continue, resume: args.resume, session: args.session, sessionId: args["session-id"], fork: args["fork-session"] });
  if (plan.kind === "new" && plan.forkOf && settings.store.kind === "postgres") {
    throw new UsageError("--fork-session copies a session's files: with a PostgreSQL store (--store) it is not supported yet; continue the session itself");
  }
  return {
    workspace,
    startDir: startDirIn(workspace, process.cwd()),
    addDirs,
    stateRoot,
    session: plan,
    settings,
    warnings,
    waitLock: args["wait-lock"] === true,
    sandbox: resolved.sandbox,
    ...(resolved.warning instanceof Promise ? { sandboxWarning: resolved.warning } : {}),
    runFlags: runFlagsOf(flags, args["trust-project"] === true, addDirs),
  };
}

function runFlagsOf(flags: SettingsFlags, trustProject: boolean, addDirs: string[]): RunFlags {
  // The enums were checked against these lists when the command line was parsed.
  return {
    ...(flags.permissionMode !== undefined ? { permissionMode: flags.permissionMode as RunFlags["permissionMode"] } : {}),
    ...(flags.allow !== undefined ? { allow: flags.allow } : {}),
    ...(flags.deny !== undefined ? { deny: flags.deny } : {}),
    ...(flags.sandbox !== undefined ? { sandbox: flags.sandbox as RunFlags["sandbox"] } : {}),
    ...(trustProject ? { trustProject: true as const } : {}),
    ...(addDirs.length > 0 ? { addDirs } : {}),
    ...(flags.leadMode !== undefined ? { leadMode: flags.leadMode as RunFlags["leadMode"] } : {}),
  };
}

/**
 * The command line with a session's recorded flags in place of its own
 * (`agent drain`): the values and the raw argv runtimeSetup reads them from.
 * Only what `recorded` holds is replaced; the added directories are checked
 * again by runtimeSetup, which refuses one that is gone.
 */
export function withRecordedFlags<T extends RuntimeValues>(args: T, rawArgs: readonly string[], recorded: RunFlags): { args: T; rawArgs: string[] } {
  const has = (key: keyof RunFlags) => recorded[key] !== undefined;
  return {
    args: {
      ...args,
      ...(has("permissionMode") ? { "permission-mode": recorded.permissionMode } : {}),
      ...(has("sandbox") ? { sandbox: recorded.sandbox } : {}),
      ...(has("trustProject") ? { "trust-project": recorded.trustProject } : {}),
      ...(has("allow") ? { allow: recorded.allow } : {}),
      ...(has("deny") ? { deny: recorded.deny } : {}),
      ...(has("leadMode") ? { "lead-mode": recorded.leadMode } : {}),
    },
    rawArgs: [
      ...rawArgs.filter((token) => !(has("allow") && token.startsWith("--allow=")) && !(has("deny") && token.startsWith("--deny="))),
      ...(recorded.allow ?? []).map((rule) => `--allow=${rule}`),
      ...(recorded.deny ?? []).map((rule) => `--deny=${rule}`),
      ...(recorded.addDirs ?? []).map((dir) => `--add-dir=${dir}`),
    ],
  };
}

/** The flags that are settings, as loadSettings takes them. */
export function settingsFlags(args: RuntimeValues & CompatValues, rawArgs?: readonly string[]): SettingsFlags {
  const shortcut = permissionShortcut(args);
  const list = (name: "allow" | "deny" | "mcp-config" | "allowedTools" | "disallowedTools") => (rawArgs ? repeatedValues(rawArgs, name) : asList(args[name]));
  // claude -p's tool lists are rules like ours, added after them.
  const rules = (own: string[] | undefined, claude: "allowedTools" | "disallowedTools") => {
    const added = (list(claude) ?? []).flatMap((value) => claudeToolRules(value, `--${claude}`));
    return own === undefined && added.length === 0 ? undefined : [...(own ?? []), ...added];
  };
  return {
    model: args.model,
    baseUrl: args["base-url"],
    provider: args.provider,
    profile: args.profile,
    apiVersion: args["api-version"],
    maxTurns: args["max-turns"],
    permissionMode: shortcut?.permissionMode ?? args["permission-mode"],
    allow: rules(list("allow"), "allowedTools"),
    deny: rules(list("deny"), "disallowedTools"),
    appendSystemPrompt: args["append-system-prompt"],
    systemPrompt: args["system-prompt"],
    record: args.record,
    replay: args.replay,
    mcpConfig: list("mcp-config"),
    sandbox: shortcut?.sandbox ?? args.sandbox,
    maxBudgetUsd: args["max-budget-usd"],
    store: args.store,
    remoteTeammates: args["remote-teammates"],
    leadMode: args["lead-mode"],
    teammatePanes: args["teammate-panes"],
  };
}

export function headlessSetup(args: HeadlessValues & CompatValues, rawArgs?: readonly string[], session?: (store: SessionStore) => SessionPlan): HeadlessSetup {
  if (args.quiet && args.verbose) throw new UsageError("--quiet and --verbose contradict each other; give one");
  const timeout = args.timeout === undefined ? undefined : { ms: parseTimeout(args.timeout), text: args.timeout };
  const { format, events } = outputChoice(args, rawArgs);
  const includePartialMessages = args["include-partial-messages"] === true;
  if (includePartialMessages && format !== "stream-json") {
    throw new UsageError("--include-partial-messages needs --output stream-json: text output streams the answer by itself on a terminal");
  }
  const schema = answerSchema(args["json-schema"], args["output-schema"]);
  return {
    ...runtimeSetup(args, rawArgs, session, { probeInBackground: true }),
    format,
    events,
    inputFormat: (args["input-format"] ?? "text") as InputFormat,
    ...(schema ? { answerSchema: schema } : {}),
    level: args.quiet ? "quiet" : args.verbose ? "verbose" : "normal",
    timeout,
    includePartialMessages,
    lastMessagePath: lastMessagePath(args["output-last-message"]),
  };
}

/** The permission shortcuts of `claude -p` and `codex exec`, as the modes they stand for (docs/compat.md). */
const SHORTCUTS = {
  "full-auto": { permissionMode: "bypassPermissions", sandbox: "workspace-write" },
  "dangerously-skip-permissions": { permissionMode: "bypassPermissions" },
  "dangerously-bypass-approvals-and-sandbox": { permissionMode: "bypassPermissions", sandbox: "danger-full-access" },
} as const satisfies Record<string, { permissionMode: string; sandbox?: string }>;

function permissionShortcut(args: RuntimeValues & CompatValues): { permissionMode: string; sandbox?: string } | undefined {
  const given = (Object.keys(SHORTCUTS) as (keyof typeof SHORTCUTS)[]).filter((name) => args[name] === true);
  if (given.length === 0) return undefined;
  const shortcut: { permissionMode: string; sandbox?: string } = SHORTCUTS[given[0]!];
  const clashes = [...given.slice(1).map((name) => `--${name}`), ...(args["permission-mode"] !== undefined ? ["--permission-mode"] : []), ...(shortcut.sandbox && args.sandbox !== undefined ? ["--sandbox"] : [])];
  if (clashes.length > 0) throw new UsageError(`--${given[0]} sets the permission mode${shortcut.sandbox ? " and the sandbox" : ""}, and so does ${clashes.join(" and ")}: give one of them`);
  return shortcut;
}

/**
 * What stdout carries: --output (ours), --output-format (claude -p's name; its
 * stream-json in Claude Code's shapes) or --json (codex exec's JSON lines); one of them.
 */
function outputChoice(args: HeadlessValues & CompatValues, rawArgs?: readonly string[]): { format: OutputFormat; events: EventShapes } {
  // --output has a default, so only the command line tells whether it was given.
  const ownGiven = rawArgs ? rawArgs.some((token) => token.startsWith("--output=")) : false;
  const given = [ownGiven ? "--output" : "", args["output-format"] !== undefined ? "--output-format" : "", args.json === true ? "--json" : ""].filter(Boolean);
  if (given.length > 1) throw new UsageError(`${given.join(" and ")} each choose what stdout carries; give one of them`);
  if (args.json === true) return { format: "stream-json", events: "codex" };
  const claude = args["output-format"];
  if (claude !== undefined) return { format: claude as OutputFormat, events: claude === "stream-json" ? "claude" : "agent" };
  return { format: (args.output ?? "text") as OutputFormat, events: "agent" };
}

/** A repeatable option: citty gives one value as a string, several as an array. */
function asList(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? [value] : [...value];
}

/** `90s`, `10m`, `1h30m`; a bare number is seconds (`--timeout 60`), as GNU timeout reads it. */
export function parseTimeout(text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text.trim()) : undefined;
  const ms = seconds === undefined ? parseDuration(text) : Math.round(seconds * 1000);
  if (ms <= 0) throw new UsageError(`--timeout must be longer than 0, e.g. --timeout 10m`);
  return ms;
}
