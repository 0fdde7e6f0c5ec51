import type { SQL } from "bun";
import { Task, taskNumber } from "../tasks/task.ts";
import type { TaskTable } from "../tasks/task-store.ts";
import { CorruptStateRowError, lockKey, parseRow, rowName, stateError } from "./state-rows.ts";

/**
 * The task graph in PostgreSQL: one row per task in `agent_tasks`. Every
 * operation is one transaction holding the session's task-graph advisory lock
 * (the file backend's `tasks.lock`): the graph is read, the rules decide, the
 * changed tasks are written, and only then is the lock let go — so of
 * concurrent claimers, in any process on any machine, exactly one wins.
 */
export class PgTaskTable implements TaskTable {
  constructor(
    readonly sql: SQL,
    readonly session: string,
  ) {}

  async locked<T>(work: (tasks: readonly Task[], write: (task: Task) => void) => T): Promise<T> {
    try {
      return await this.sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(this.session, "tasks")}, 0))`;
        const rows: { id: string; record: string }[] = await tx`SELECT id, record FROM agent_tasks WHERE session = ${this.session} ORDER BY number`;
        const tasks = rows.map((row) => {
          const where = rowName("agent_tasks", this.session, row.id);
          const task = parseRow(row.record, Task, where);
          if (task.id !== row.id) throw new CorruptStateRowError(where, `it holds task ${task.id}, not ${row.id}`);
          return task;
        });
        const writes: Task[] = [];
        // Validated before writing, so the store can never write a row it would refuse to read.
        const value = work(tasks, (task) => writes.push(Task.parse(task)));
        for (const task of writes) {
          await tx`
            INSERT INTO agent_tasks (session, id, number, record)
            VALUES (${this.session}, ${task.id}, ${taskNumber(task.id)}, ${JSON.stringify(task)})
            ON CONFLICT (session, id) DO UPDATE SET record = excluded.record`;
        }
        return value;
      });
    } catch (error) {
      throw stateError("a task graph operation", error, "nothing was changed");
    }
  }
}
