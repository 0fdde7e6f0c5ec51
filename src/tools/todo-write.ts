import { z } from "zod";
import { Todo, type TodoList } from "../todos/todo-list.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const TodoWriteInput = lazySchema(() =>
  z.strictObject({
    todos: z
      .array(Todo)
      .describe("The whole list, replacing the previous one: each item's content and status (pending, in_progress, completed). At most one in_progress."),
  }),
);
export type TodoWriteInput = z.infer<typeof TodoWriteInput>;

/** Replaces the agent's todo list; `onChange` shows it to the user (stderr, stream-json). */
export function todoWriteTool(list: TodoList, onChange: (todos: readonly Todo[]) => void) {
  return defineTool({
    name: "todo_write",
    description:
      "Plan multi-step work as a todo list and keep it current: send the whole list each time, marking the item you " +
      "work on in_progress (only one) and finished ones completed.",
    input: TodoWriteInput,
    effect: "coordinate",
    subject: () => "",
    async run(input) {
      list.replace(input.todos);
      onChange(list.todos);
      const done = input.todos.filter((todo) => todo.status === "completed").length;
      return { content: `todo list updated: ${input.todos.length} item(s), ${done} completed` };
    },
  });
}
