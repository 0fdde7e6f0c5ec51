import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../core/errors.ts";
import { ensureDir, namesIn, writeFileAtomic } from "../storage/atomic-file.ts";
import { TASK_ID_PATTERN, Task, type TaskId, taskNumber } from "./task.ts";

/** `<state-dir>/tasks/<id>.json`, one file a task, and the lock that guards them all. */
export class TaskFiles {
  readonly dir: string;
  readonly lock: string;

  constructor(readonly stateDir: string) {
    this.dir = join(stateDir, "tasks");
    this.lock = join(stateDir, "tasks.lock");
  }

  pathOf(id: TaskId): string {
    return join(this.dir, `${id}.json`);
  }

  /** Every task, in id order. A file that is not a valid task stops the read: it is never skipped. */
  readAll(): Task[] {
    const tasks: Task[] = [];
    for (const name of namesIn(this.dir)) {
      // Dot files are writeFileAtomic's temp files, possibly left by a crash mid-write.
      if (name.startsWith(".")) continue;
      const id = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
      if (!TASK_ID_PATTERN.test(id)) {
        throw new CorruptStateFileError(join(this.dir, name), 'not a task file (expected a name like "t1.json")');
      }
      tasks.push(this.read(id));
    }
    return tasks.sort((a, b) => taskNumber(a.id) - taskNumber(b.id));
  }

  read(id: TaskId): Task {
    const path = this.pathOf(id);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      if (error instanceof SyntaxError) throw new CorruptStateFileError(path, "not valid JSON");
      throw error;
    }
    const parsed = Task.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CorruptStateFileError(path, `${issue?.path.join(".") || "task"}: ${issue?.message ?? "invalid"}`);
    }
    if (parsed.data.id !== id) throw new CorruptStateFileError(path, `it holds task ${parsed.data.id}, not ${id}`);
    return parsed.data;
  }

  /** Validated before writing, so the store can never write a file it would refuse to read. */
  write(task: Task): void {
    ensureDir(this.dir);
    writeFileAtomic(this.pathOf(task.id), `${JSON.stringify(Task.parse(task), null, 2)}\n`);
  }
}
