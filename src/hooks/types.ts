import type { HookEvent } from "../config/config.ts";

export interface HookOutcome {
  /** Set when a hook exited 2: its stderr, the reason the action is blocked. */
  blocked?: string;
  /** One line per hook that failed otherwise (other exit code, timeout, could not start). */
  warnings: string[];
}

/** The hooks configured for a runtime. Events are JSON on the hook's stdin. */
export interface Hooks {
  run(event: HookEvent, payload: Record<string, unknown>, context: { workspace: string; toolName?: string; signal?: AbortSignal }): Promise<HookOutcome>;
}
