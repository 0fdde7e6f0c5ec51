import { z } from "zod";
import type { RunResult } from "../runtime/run-types.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const TaskInput = lazySchema(() =>
  z.strictObject({
    description: z.string().min(1).describe("A few words on what the subagent is for (shown in progress)."),
    prompt: z.string().min(1).describe("The complete task: the subagent starts with a fresh history and sees nothing of yours."),
  }),
);
export type TaskInput = z.infer<typeof TaskInput>;

/** Runs one subagent turn to the end; built fresh for each call by the composition root. */
export type SubagentRun = (prompt: string, options: { idempotencyKey: string; signal: AbortSignal; label: string }) => Promise<RunResult>;

/**
 * A one-shot subagent: a fresh history, the base tools only (no task, no
 * teammates), the same hooks and permissions, a turn cap. Only its final text
 * comes back.
 */
export function taskTool(runSubagent: SubagentRun) {
  let calls = 0;
  return defineTool({
    name: "task",
    description:
      "Hand a self-contained piece of work (a search, an investigation, a focused change) to a one-shot subagent with " +
      "a fresh context and the base tools. Returns only its final answer, keeping your own context small.",
    input: TaskInput,
    effect: "coordinate",
    subject: (input) => input.description,
    async run(input, context) {
      calls += 1;
      // Derived from the parent turn's key: a replayed turn gives its subagents the same keys.
      const idempotencyKey = `${context.idempotencyKey}/task-${calls}`;
      const result = await runSubagent(input.prompt, { idempotencyKey, signal: context.signal, label: `task-${calls}` });
      if (result.subtype === "error_max_turns") {
        return { content: `the subagent hit its turn cap (${result.turns} model calls) before finishing; ${result.result}`, isError: true };
      }
      if (result.isError) return { content: `the subagent failed (${result.subtype}): ${result.result}`, isError: true };
      return { content: result.result };
    },
  });
}
