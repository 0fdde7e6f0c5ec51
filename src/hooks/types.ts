import type { HookEvent } from "../config/config.ts";

/** What a PreToolUse hook said about the call beside blocking it (Claude Code's `permissionDecision`). */
export interface HookPermission {
  /** `allow` answers the question a person would be asked; `ask` asks a person even where the rules allow. */
  decision: "allow" | "ask";
  reason?: string;
}

export interface HookOutcome {
  /**
   * Why the action is blocked: a hook exited 2 (its stderr), or answered JSON
   * `decision: "block"` (its `reason`) or `permissionDecision: "deny"`.
   */
  blocked?: string;
  /** A hook answered `continue: false`: the agent stops, for this reason (`stopReason`). */
  stopped?: string;
  /** PreToolUse only: a hook's `allow` or `ask`; a `deny` is `blocked`. */
  permission?: HookPermission;
  /** Text for the model: `additionalContext`, or a UserPromptSubmit/SessionStart hook's plain stdout. */
  context?: string[];
  /** One line per hook that failed otherwise (other exit code, timeout, could not start), and each `systemMessage`. */
  warnings: string[];
}

export interface HookRunContext {
  workspace: string;
  toolName?: string;
  signal?: AbortSignal;
}

/** The hooks configured for a runtime. Events are JSON on the hook's stdin. */
export interface Hooks {
  run(event: HookEvent, payload: Record<string, unknown>, context: HookRunContext): Promise<HookOutcome>;
  /** Whether any hook is configured for `event` (without it, a caller assumes one may be). */
  has?(event: HookEvent): boolean;
}

/** Hooks that can say which events they listen to: what the runtime's parts are given. */
export type SessionHooks = Hooks & { has(event: HookEvent): boolean };
