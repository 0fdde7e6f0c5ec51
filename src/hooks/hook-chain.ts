import type { HookEvent } from "../config/config.ts";
import type { HookOutcome, HookRunContext, Hooks } from "./types.ts";

/**
 * Several sources of hooks as one: the config's commands, then those of the
 * program driving the agent (a Claude Agent SDK's callbacks). They run in that
 * order, their answers merged as one source's are: the first block or stop wins
 * and the later ones do not run; of permission answers the stricter holds.
 */
export class HookChain implements Hooks {
  constructor(private readonly sources: readonly (Hooks & { has(event: HookEvent): boolean })[]) {}

  has(event: HookEvent): boolean {
    return this.sources.some((source) => source.has(event));
  }

  async run(event: HookEvent, payload: Record<string, unknown>, context: HookRunContext): Promise<HookOutcome> {
    const outcome: HookOutcome = { warnings: [] };
    for (const source of this.sources) {
      if (!source.has(event)) continue;
      const answer = await source.run(event, payload, context);
      outcome.warnings.push(...answer.warnings);
      const final = addAnswer(outcome, answer);
      if (final) return final;
    }
    return outcome;
  }
}

/**
 * Adds one hook's answer to the outcome so far: its context, its permission
 * answer (ask over allow). A block or stop ends the event: the final outcome is
 * returned, and the caller runs no later hook.
 */
export function addAnswer(outcome: HookOutcome, answer: Omit<HookOutcome, "warnings">): HookOutcome | undefined {
  if (answer.context) outcome.context = [...(outcome.context ?? []), ...answer.context];
  if (answer.permission && outcome.permission?.decision !== "ask") outcome.permission = answer.permission;
  if (answer.stopped === undefined && answer.blocked === undefined) return undefined;
  return { ...outcome, ...(answer.stopped !== undefined ? { stopped: answer.stopped } : {}), ...(answer.blocked !== undefined ? { blocked: answer.blocked } : {}) };
}
