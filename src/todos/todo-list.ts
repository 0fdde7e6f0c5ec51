import { join } from "node:path";
import { z } from "zod";
import { ensureDir, writeFileAtomic } from "../storage/atomic-file.ts";
import { readStateFile } from "../storage/state-file.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const TODO_STATUSES = ["pending", "in_progress", "completed"] as const;

export const Todo = lazySchema(() =>
  z.strictObject({
    content: z.string().min(1),
    status: z.enum(TODO_STATUSES),
  }),
);
export type Todo = z.infer<typeof Todo>;

const TodoFile = lazySchema(() => z.strictObject({ version: z.literal(1), todos: z.array(Todo) }));

/** Model calls without a todo_write after which the agent is reminded of its open items. */
export const REMIND_AFTER_ROUNDS = 3;

/**
 * An agent's plan: the list todo_write replaces, persisted at
 * `<state-dir>/todos/<agent>.json`, and the count of model calls since it last
 * changed, for the reminder.
 */
export class TodoList {
  #todos: Todo[];
  #roundsSinceUpdate = 0;
  readonly path: string;

  constructor(stateDir: string, agent: string) {
    this.path = join(stateDir, "todos", `${agent}.json`);
    this.#todos = readTodos(this.path);
  }

  get todos(): readonly Todo[] {
    return this.#todos;
  }

  replace(todos: Todo[]): void {
    const inProgress = todos.filter((todo) => todo.status === "in_progress").length;
    if (inProgress > 1) {
      throw new Error(`${inProgress} items are in_progress; keep at most one in progress and the rest pending or completed`);
    }
    ensureDir(join(this.path, ".."));
    writeFileAtomic(this.path, `${JSON.stringify({ version: 1, todos }, null, 2)}\n`);
    this.#todos = todos;
    this.#roundsSinceUpdate = 0;
  }

  /** Whether the next model call's reminder() would give one: asked without counting a call. */
  reminderDue(): boolean {
    return this.#roundsSinceUpdate + 1 > REMIND_AFTER_ROUNDS && this.#todos.some((todo) => todo.status !== "completed");
  }

  /** Called before each model call: a reminder to add to the history, when one is due. */
  reminder(): string | undefined {
    this.#roundsSinceUpdate += 1;
    const open = this.#todos.filter((todo) => todo.status !== "completed");
    if (open.length === 0 || this.#roundsSinceUpdate <= REMIND_AFTER_ROUNDS) return undefined;
    this.#roundsSinceUpdate = 0;
    return [
      `[reminder] Your todo list has not changed for ${REMIND_AFTER_ROUNDS} model calls. Open items:`,
      ...open.map((todo) => `- [${todo.status}] ${todo.content}`),
      "Update it with todo_write as you make progress (at most one item in_progress).",
    ].join("\n");
  }
}

function readTodos(path: string): Todo[] {
  return readStateFile(path, TodoFile)?.todos ?? [];
}
