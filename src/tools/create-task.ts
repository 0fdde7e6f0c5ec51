import { z } from "zod";
import type { TaskStore } from "../tasks/task-store.ts";
import { TaskId } from "../tasks/task.ts";
import { taskLine } from "./task-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const CreateTaskInput = lazySchema(() =>
  z.strictObject({
    subject: z.string().trim().min(1).describe("What the task is, in a short imperative line, e.g. \"Write the parser tests\"."),
    description: z.string().optional().describe("Details someone needs to do the task without asking: scope, files, done when."),
    blockedBy: z
      .array(TaskId)
      .optional()
      .describe('Ids of tasks that must be completed before this one can be claimed, e.g. ["t1", "t2"]; default none.'),
  }),
);
export type CreateTaskInput = z.infer<typeof CreateTaskInput>;

export function createTaskTool(store: TaskStore) {
  return defineTool({
    name: "create_task",
    description:
      "Add a task to the persistent task graph (kept in the state dir across runs). Returns its id " +
      '("t1", "t2", …). Use blockedBy for order: a task can be claimed only once all its blockers are completed.',
    input: CreateTaskInput,
    effect: "coordinate",
    subject: (input) => input.subject,
    async run(input, context) {
      const task = await store.create(input, context.identity);
      return { content: `created ${taskLine(task)}` };
    },
  });
}
