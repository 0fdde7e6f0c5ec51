import { z } from "zod";
import type { TaskStore } from "../tasks/task-store.ts";
import { TaskId } from "../tasks/task.ts";
import { taskLines } from "./task-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const CompleteTaskInput = lazySchema(() =>
  z.strictObject({
    id: TaskId.describe('Id of a task you claimed, e.g. "t3".'),
  }),
);
export type CompleteTaskInput = z.infer<typeof CompleteTaskInput>;

export function completeTaskTool(store: TaskStore) {
  return defineTool({
    name: "complete_task",
    description:
      "Mark a task you claimed as completed. Returns the tasks this completion unblocked (now ready to claim). " +
      "Only the task's owner can complete it.",
    input: CompleteTaskInput,
    effect: "coordinate",
    subject: (input) => input.id,
    async run(input, context) {
      const { task, unblocked } = await store.complete(input.id, context.identity);
      const done = `completed ${task.id} ${task.subject}`;
      if (unblocked.length === 0) return { content: `${done}; no task became ready to claim` };
      return { content: `${done}; now ready to claim:\n${taskLines(unblocked)}` };
    },
  });
}
