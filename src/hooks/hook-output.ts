import { z } from "zod";
import type { HookEvent } from "../config/config.ts";
import type { HookOutcome } from "./types.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * What a hook that exits 0 may print on stdout: Claude Code's JSON answer.
 * Loose: a key of theirs we do not act on (`suppressOutput`) is not an error.
 */
const HookAnswer = lazySchema(() =>
  z.looseObject({
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    /** `approve` is Claude Code's older spelling of a PreToolUse `allow`. */
    decision: z.enum(["block", "approve"]).optional(),
    reason: z.string().optional(),
    systemMessage: z.string().optional(),
    additionalContext: z.string().optional(),
    hookSpecificOutput: z
      .looseObject({
        permissionDecision: z.enum(["allow", "deny", "ask"]).optional(),
        permissionDecisionReason: z.string().optional(),
        additionalContext: z.string().optional(),
      })
      .optional(),
  }),
);

/** Events whose hooks' plain (non-JSON) stdout is context for the model, as in Claude Code. */
const PLAIN_STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"]);

/** One hook's answer, read from its stdout after it exited 0; `name` says which hook in a warning. */
export function readHookAnswer(event: HookEvent, stdout: string, name: string): Omit<HookOutcome, "warnings"> & { warning?: string } {
  const text = stdout.trim();
  if (text === "") return {};
  if (!text.startsWith("{")) return PLAIN_STDOUT_IS_CONTEXT.has(event) ? { context: [text] } : {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { warning: `${name} printed invalid JSON on stdout (${(error as Error).message}); its answer is ignored` };
  }
  return hookJsonAnswer(json, name);
}

/**
 * A hook's JSON answer as an outcome: a command hook's stdout, or what a Claude
 * Agent SDK hook callback returned (the same shape), so both are applied alike.
 */
export function hookJsonAnswer(json: unknown, name: string): Omit<HookOutcome, "warnings"> & { warning?: string } {
  const parsed = HookAnswer.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { warning: `${name} answered JSON whose ${issue?.path.join(".") || "value"} is not valid (${issue?.message}); its answer is ignored` };
  }
  const answer = parsed.data;
  const specific = answer.hookSpecificOutput;
  const out: Omit<HookOutcome, "warnings"> & { warning?: string } = {};
  const context = specific?.additionalContext ?? answer.additionalContext;
  if (context !== undefined && context.trim() !== "") out.context = [context.trim()];
  if (answer.systemMessage !== undefined) out.warning = `${name}: ${answer.systemMessage}`;
  if (answer.continue === false) out.stopped = answer.stopReason ?? `${name} answered "continue": false`;
  if (specific?.permissionDecision === "deny" || answer.decision === "block") {
    out.blocked = specific?.permissionDecisionReason ?? answer.reason ?? `${name} blocked it without a reason`;
  } else if (specific?.permissionDecision === "allow" || specific?.permissionDecision === "ask" || answer.decision === "approve") {
    const reason = specific?.permissionDecisionReason ?? answer.reason;
    out.permission = { decision: specific?.permissionDecision === "ask" ? "ask" : "allow", ...(reason !== undefined ? { reason } : {}) };
  }
  return out;
}
