import type { ConfigFile, HookConfig, HookEvent } from "../config/config.ts";
import { ConfigError } from "../core/errors.ts";
import { runProcessGroup } from "../process/process-group.ts";
import { type EnvPolicy, commandEnv } from "../security/env-policy.ts";
import { redactValue } from "../security/redact.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import { type HookSession, claudeKeys, matcherNames } from "./claude-protocol.ts";
import { readHookAnswer } from "./hook-output.ts";
import type { HookOutcome, HookRunContext, Hooks } from "./types.ts";

export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** A block reason longer than this is cut: it goes back to the model. */
const MAX_REASON_CHARS = 10_000;
/** The exit code by which a hook blocks the action; its stderr is the reason. */
export const BLOCK_EXIT_CODE = 2;

interface CompiledHook {
  config: HookConfig;
  /** Absent: every tool. */
  matcher: RegExp | undefined;
}

export interface ShellHooksOptions {
  /** Default timeout for a hook without `timeoutMs`. */
  timeoutMs?: number;
  /** Which of the agent's variables hooks see (config `shell.env`), as commands do; the default policy when absent. */
  env?: EnvPolicy;
  /**
   * The sandbox hooks run in, around the workspace of the agent whose event it
   * is: a hook runs files the model can edit (`npm test` runs package.json's
   * script). A hook with `"sandbox": false` (user config only) runs outside.
   */
  sandbox?: Sandbox;
  /** The session, for Claude Code's `session_id`, `transcript_path` and `permission_mode` keys. */
  session?: HookSession;
}

export function compileMatcher(event: HookEvent, source: string | undefined): RegExp | undefined {
  if (source === undefined || source === "" || source === "*") return undefined;
  try {
    // Anchored: "shell|write_file" means those two tools, not every name containing "file".
    return new RegExp(`^(?:${source})$`);
  } catch (error) {
    throw new ConfigError(
      `invalid hooks.${event} matcher ${JSON.stringify(source)} in config.json: ${(error as Error).message}; use a regular expression over tool names such as "shell|write_file" or "Edit|Write"`,
    );
  }
}

/** `sh`'s exit codes for a command it found but could not execute, and for one it did not find. */
const NOT_EXECUTABLE = 126;
const NOT_FOUND = 127;

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * The hooks of config.json, run as `sh -c` commands in the workspace (inside the
 * sandbox unless the user's own config says `"sandbox": false`) with the
 * event as JSON on stdin (ours, `{"event": …, …payload}`, and Claude Code's
 * keys) and AGENT_HOOK_EVENT set. Contract (Claude Code's): exit 0 continues,
 * its stdout read as a JSON answer (`decision`, `continue`, `permissionDecision`,
 * `additionalContext`); exit 2 blocks, its stderr being the reason; any other
 * exit, a timeout (the hook is killed) or a failure to start is a warning and
 * the action goes on — except a PreToolUse hook that cannot start (no process,
 * or the shell's 126/127: not executable, not found), which blocks the call: a
 * guard that never ran must not pass what it guards. Hooks of one event run in order; the first block (or
 * stop) wins and the later ones do not run.
 */
export class ShellHooks implements Hooks {
  readonly #hooks: Partial<Record<HookEvent, CompiledHook[]>> = {};
  readonly #timeoutMs: number;
  readonly #env: EnvPolicy | undefined;
  readonly #sandbox: Sandbox | undefined;
  readonly #session: HookSession | undefined;

  /** Throws `ConfigError` for a matcher that is not a valid regular expression. */
  constructor(config: ConfigFile["hooks"] = {}, options: ShellHooksOptions = {}) {
    for (const [event, hooks] of Object.entries(config) as Array<[HookEvent, HookConfig[]]>) {
      this.#hooks[event] = hooks.map((hook) => ({ config: hook, matcher: compileMatcher(event, hook.matcher) }));
    }
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    this.#env = options.env;
    this.#sandbox = options.sandbox;
    this.#session = options.session;
  }

  /** Whether any hook is configured for `event`: a caller skips building a payload nobody reads. */
  has(event: HookEvent): boolean {
    return (this.#hooks[event]?.length ?? 0) > 0;
  }

  async run(event: HookEvent, payload: Record<string, unknown>, context: HookRunContext): Promise<HookOutcome> {
    const outcome: HookOutcome = { warnings: [] };
    const hooks = this.#hooks[event] ?? [];
    if (hooks.length === 0) return outcome;
    // Masked like everything else that leaves the process: a prompt or a tool input may quote the key.
    const event_ = { ...claudeKeys(event, payload, context.workspace, this.#session), event, ...payload };
    const stdin = new TextEncoder().encode(JSON.stringify(redactValue(event_)));
    const names = context.toolName === undefined ? [] : matcherNames(context.toolName);
    for (const hook of hooks) {
      // Matchers select tools (ours or Claude Code's names); for events without a tool every hook runs.
      if (hook.matcher && context.toolName !== undefined && !names.some((name) => hook.matcher!.test(name))) continue;
      const answer = await this.#runOne(event, hook.config, stdin, context, outcome.warnings);
      if (answer.context) outcome.context = [...(outcome.context ?? []), ...answer.context];
      // Of several hooks' permission answers the stricter holds: ask over allow (a deny blocks).
      if (answer.permission && outcome.permission?.decision !== "ask") outcome.permission = answer.permission;
      if (answer.stopped !== undefined) return { ...outcome, stopped: answer.stopped, ...(answer.blocked !== undefined ? { blocked: answer.blocked } : {}) };
      if (answer.blocked !== undefined) return { ...outcome, blocked: answer.blocked };
    }
    return outcome;
  }

  /** One hook's answer; a failure is a warning pushed, and no answer. */
  async #runOne(
    event: HookEvent,
    hook: HookConfig,
    stdin: Uint8Array,
    context: HookRunContext,
    warnings: string[],
  ): Promise<Omit<HookOutcome, "warnings">> {
    const name = `${event} hook ${JSON.stringify(hook.command)}`;
    const timeoutMs = hook.timeoutMs ?? this.#timeoutMs;
    let result: Awaited<ReturnType<typeof runProcessGroup>>;
    try {
      const sandboxed = this.#sandbox !== undefined && hook.sandbox !== false;
      // A sandbox that cannot start refuses the hook (thrown here): a warning, like a hook that cannot start.
      const cmd = sandboxed ? this.#sandbox!.within(context.workspace).command(hook.command, context.workspace) : ["sh", "-c", hook.command];
      result = await runProcessGroup({
        cmd,
        cwd: context.workspace,
        // Built at each start: a secret registered since (a store's password) is left out too.
        env: { ...commandEnv(this.#env), AGENT_HOOK_EVENT: event },
        stdin,
        capture: "split",
        maxChars: MAX_REASON_CHARS,
        timeoutMs,
        ...(context.signal ? { signal: context.signal } : {}),
      });
    } catch (error) {
      return this.#notStarted(event, name, (error as Error).message, warnings);
    }
    const stderr = result.output.text.trim();
    if (event === "PreToolUse" && (result.exitCode === NOT_EXECUTABLE || result.exitCode === NOT_FOUND)) {
      return this.#notStarted(event, name, stderr ? firstLine(stderr) : `sh exited ${result.exitCode}`, warnings);
    }
    if (result.timedOut) warnings.push(`${name} timed out after ${timeoutMs} ms and was killed`);
    else if (result.aborted) warnings.push(`${name} was interrupted`);
    else if (result.exitCode === BLOCK_EXIT_CODE) return { blocked: stderr === "" ? `${name} exited 2 without a reason on stderr` : stderr };
    else if (result.exitCode === null) warnings.push(`${name} was killed by signal ${result.signalCode}`);
    else if (result.exitCode !== 0) warnings.push(`${name} exited ${result.exitCode}${stderr ? `: ${firstLine(stderr)}` : ""}`);
    else {
      const { warning, ...answer } = readHookAnswer(event, result.stdout?.text ?? "", name);
      if (warning !== undefined) warnings.push(warning);
      return answer;
    }
    return {};
  }

  /** A hook that never ran: a warning, and for PreToolUse the call blocked with why. */
  #notStarted(event: HookEvent, name: string, why: string, warnings: string[]): Omit<HookOutcome, "warnings"> {
    if (event === "PreToolUse") return { blocked: `${name} could not start (${why}); the call is denied until the hook runs` };
    warnings.push(`${name} could not start: ${why}`);
    return {};
  }
}
