import { z } from "zod";
import type { TaskStore } from "../tasks/task-store.ts";
import { TaskId } from "../tasks/task.ts";
import { taskLine } from "./task-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const ClaimTaskInput = lazySchema(() =>
  z.strictObject({
    id: TaskId.describe('Id of the task to claim, e.g. "t3".'),
  }),
);
export type ClaimTaskInput = z.infer<typeof ClaimTaskInput>;

/** The owner is the calling agent's trusted identity, never part of the input. */
export function claimTaskTool(store: TaskStore) {
  return defineTool({
    name: "claim_task",
    description:
      "Claim a pending task whose blockers are all completed: it becomes in_progress with you as its owner, and no one " +
      "else can claim it. Refused, naming the open blockers, while it is blocked, and when someone already claimed it.",
    input: ClaimTaskInput,
    effect: "coordinate",
    subject: (input) => input.id,
    async run(input, context) {
      const task = await store.claim(input.id, context.identity);
      return { content: `claimed ${taskLine(task)}; call complete_task when it is done` };
    },
  });
}
