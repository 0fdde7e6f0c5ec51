import { z } from "zod";
import type { TaskStore } from "../tasks/task-store.ts";
import { TaskId } from "../tasks/task.ts";
import { taskDetail } from "./task-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const GetTaskInput = lazySchema(() =>
  z.strictObject({
    id: TaskId.describe('Id of the task, e.g. "t3".'),
  }),
);
export type GetTaskInput = z.infer<typeof GetTaskInput>;

export function getTaskTool(store: TaskStore) {
  return defineTool({
    name: "get_task",
    description: "Show one task of the task graph: status, owner, each blocker and whether it is completed, and its description.",
    input: GetTaskInput,
    effect: "coordinate",
    subject: (input) => input.id,
    async run(input) {
      return { content: taskDetail(await store.get(input.id)) };
    },
  });
}
