import type { HookEvent } from "../../config/config.ts";
import { type HookSession, claudeKeys, matcherNames } from "../../hooks/claude-protocol.ts";
import { hookJsonAnswer } from "../../hooks/hook-output.ts";
import { addAnswer } from "../../hooks/hook-chain.ts";
import { compileMatcher, DEFAULT_HOOK_TIMEOUT_MS } from "../../hooks/hook-runner.ts";
import type { HookOutcome, HookRunContext, SessionHooks } from "../../hooks/types.ts";
import { redactValue } from "../../security/redact.ts";
import type { SdkControl, SdkHookMatcher } from "./sdk-control.ts";

/**
 * The Claude Agent SDK's hooks (its `initialize` lists callback ids per event
 * and matcher): each event is sent as a `hook_callback` request with Claude
 * Code's hook input, and the answer — the JSON a command hook would print — is
 * applied as a command hook's is (src/hooks/hook-output.ts): a deny blocks the
 * call. A callback that fails or times out is a warning, as a command hook's.
 */
export class SdkHooks implements SessionHooks {
  readonly #events: Partial<Record<HookEvent, { matcher: RegExp | undefined; ids: string[]; timeoutMs: number }[]>> = {};

  constructor(
    private readonly control: SdkControl,
    hooks: Record<string, SdkHookMatcher[]>,
    private readonly session: HookSession,
  ) {
    for (const [event, list] of Object.entries(hooks) as [HookEvent, SdkHookMatcher[]][]) {
      this.#events[event] = list.map((entry) => ({
        matcher: compileMatcher(event, entry.matcher),
        ids: entry.hookCallbackIds,
        timeoutMs: entry.timeout !== undefined ? entry.timeout * 1000 : DEFAULT_HOOK_TIMEOUT_MS,
      }));
    }
  }

  has(event: HookEvent): boolean {
    return (this.#events[event]?.length ?? 0) > 0;
  }

  async run(event: HookEvent, payload: Record<string, unknown>, context: HookRunContext): Promise<HookOutcome> {
    const outcome: HookOutcome = { warnings: [] };
    const input = redactValue(claudeKeys(event, payload, context.workspace, this.session));
    const names = context.toolName === undefined ? [] : matcherNames(context.toolName);
    for (const entry of this.#events[event] ?? []) {
      if (entry.matcher && context.toolName !== undefined && !names.some((name) => entry.matcher!.test(name))) continue;
      for (const id of entry.ids) {
        const name = `${event} SDK hook ${id}`;
        let answer: Record<string, unknown>;
        try {
          answer = await this.#call(id, input, payload.callId, entry.timeoutMs, context.signal);
        } catch (error) {
          outcome.warnings.push(`${name} failed: ${(error as Error).message}`);
          continue;
        }
        // `async: true`: the callback goes on by itself and decides nothing.
        if (answer.async === true) continue;
        const { warning, ...decided } = hookJsonAnswer(answer, name);
        if (warning !== undefined) outcome.warnings.push(warning);
        const final = addAnswer(outcome, decided);
        if (final) return final;
      }
    }
    return outcome;
  }

  async #call(id: string, input: unknown, callId: unknown, timeoutMs: number, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const request = this.control.request(
      { subtype: "hook_callback", callback_id: id, input, ...(typeof callId === "string" ? { tool_use_id: callId } : {}) },
      signal ? AbortSignal.any([signal, timeout]) : timeout,
    );
    try {
      return await request;
    } catch (error) {
      if (timeout.aborted) throw new Error(`no answer within ${timeoutMs} ms`);
      throw error;
    }
  }
}
