import type { TaskStore } from "../tasks/task-store.ts";
import { claimTaskTool } from "./claim-task.ts";
import { completeTaskTool } from "./complete-task.ts";
import { createTaskTool } from "./create-task.ts";
import { getTaskTool } from "./get-task.ts";
import { listTasksTool } from "./list-tasks.ts";
import type { Tool } from "../core/tool.ts";

/** The task-graph tools over one store, in the order the model is told about them. */
export function taskTools(store: TaskStore): Tool[] {
  return [createTaskTool(store), getTaskTool(store), listTasksTool(store), claimTaskTool(store), completeTaskTool(store)];
}
