import { z } from "zod";
import type { TaskStore } from "../tasks/task-store.ts";
import { TaskStatus } from "../tasks/task.ts";
import { taskLines } from "./task-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const ListTasksInput = lazySchema(() =>
  z.strictObject({
    status: TaskStatus.optional().describe("Only tasks with this status; default all."),
  }),
);
export type ListTasksInput = z.infer<typeof ListTasksInput>;

export function listTasksTool(store: TaskStore) {
  return defineTool({
    name: "list_tasks",
    description:
      "List the tasks of the task graph, one line each: id, status (with the open blockers of a blocked task, " +
      "or the owner of a claimed one) and subject. Tasks marked \"ready to claim\" can be claimed now.",
    input: ListTasksInput,
    effect: "coordinate",
    subject: (input) => input.status ?? "",
    async run(input) {
      const tasks = await store.list({ status: input.status });
      if (tasks.length > 0) return { content: taskLines(tasks) };
      return { content: input.status === undefined ? "no tasks yet" : `no ${input.status} tasks` };
    },
  });
}
