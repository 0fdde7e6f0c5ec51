import { type Clock, systemClock } from "../core/clock.ts";
import { UsageError } from "../core/errors.ts";
import { ensureDir } from "../storage/atomic-file.ts";
import { type FileLockOptions, withFileLock } from "../storage/file-lock.ts";
import { type Task, type TaskId, type TaskStatus, type TaskView, taskNumber } from "./task.ts";
import { TaskBlockedError, TaskDependencyError, TaskRefusedError, TaskStateError, UnknownTaskError } from "./task-errors.ts";
import { TaskFiles } from "./task-files.ts";
import { type TaskIndex, cycleThrough, indexTasks, openBlockersOf, unblockedBy, viewOf } from "./task-graph.ts";

export interface NewTask {
  subject: string;
  description?: string | undefined;
  /** Ids of tasks that must be completed before this one can be claimed. */
  blockedBy?: readonly string[] | undefined;
}

/**
 * Where a session's tasks are kept. `locked` runs `work` on every task, read
 * under a lock that every process respects, and stores what `work` passes to
 * `write` before the lock is let go: so a claim's check and its write are one
 * step for every process, and of concurrent claimers exactly one wins.
 */
export interface TaskTable {
  locked<T>(work: (tasks: readonly Task[], write: (task: Task) => void) => T): Promise<T>;
}

export interface Completion {
  task: TaskView;
  /** Tasks this completion left with no open blocker, in id order. */
  unblocked: TaskView[];
}

/**
 * The persistent task graph: its rules (ids, blockers, one claimer, only the
 * owner completes) over a TaskTable, which the runtime never sees. Reads take
 * the table's lock too, so a listing never mixes states from before and after
 * a write. Each operation reads every task; task graphs are tens of tasks, not
 * thousands, and a whole read is what lets blockers be checked at all.
 */
export interface TaskStoreOptions {
  table: TaskTable;
  clock?: Clock;
  /** Told after a task is created or completed: work may have become free to claim (self-claiming teammates wait for it). */
  onChange?: () => void;
  /** Asked before a task is created or completed (the TaskCreated and TaskCompleted hooks). */
  gates?: TaskGates;
}

/**
 * Checks a creation or completion before it is written: a returned reason
 * refuses it (TaskRefusedError, nothing written), undefined lets it happen.
 * `by` is the agent asking (the Lead or a teammate).
 */
export interface TaskGates {
  creating?(task: NewTask, by: string | undefined): Promise<string | undefined>;
  completing?(task: TaskView, by: string | undefined): Promise<string | undefined>;
}

export class TaskStore {
  readonly #table: TaskTable;
  readonly #clock: Clock;
  readonly #onChange: (() => void) | undefined;
  readonly #gates: TaskGates;

  constructor(options: TaskStoreOptions) {
    this.#table = options.table;
    this.#clock = options.clock ?? systemClock;
    this.#onChange = options.onChange;
    this.#gates = options.gates ?? {};
  }

  async create(input: NewTask, by?: string): Promise<TaskView> {
    if (input.subject.trim() === "") throw new UsageError("a task needs a non-empty subject");
    const refusal = await this.#gates.creating?.(input, by);
    if (refusal !== undefined) throw new TaskRefusedError(`the TaskCreated hook refused the task "${input.subject}", it was not created: ${refusal}`);
    const created = await this.#locked((index, write) => {
      const id: TaskId = `t${Math.max(0, ...[...index.keys()].map(taskNumber)) + 1}`;
      const blockedBy = [...new Set(input.blockedBy ?? [])];
      if (blockedBy.includes(id)) throw new TaskDependencyError(`task ${id} cannot be blocked by itself`);
      const unknown = blockedBy.filter((blocker) => !index.has(blocker));
      if (unknown.length > 0) throw new UnknownTaskError(unknown, [...index.keys()], "blocker");
      const cycle = cycleThrough(id, (other) => (other === id ? blockedBy : (index.get(other)?.blockedBy ?? [])));
      if (cycle) throw new TaskDependencyError(`blockedBy would make a cycle ${cycle.join(" → ")}; a cycle can never be finished`);
      const now = this.#now();
      const task: Task = {
        id,
        subject: input.subject,
        ...(input.description === undefined ? {} : { description: input.description }),
        blockedBy,
        status: "pending",
        createdAtUtc: now,
        updatedAtUtc: now,
      };
      write(task);
      return viewOf(task, new Map([...index, [id, task]]));
    });
    this.#onChange?.();
    return created;
  }

  get(id: string): Promise<TaskView> {
    return this.#locked((index) => viewOf(this.#find(id, index), index));
  }

  list(filter: { status?: TaskStatus | undefined } = {}): Promise<TaskView[]> {
    return this.#locked((index) =>
      [...index.values()].filter((task) => filter.status === undefined || task.status === filter.status).map((task) => viewOf(task, index)),
    );
  }

  /** Gives a pending task with every blocker completed to `owner`. */
  async claim(id: string, owner: string): Promise<TaskView> {
    if (owner === "") throw new UsageError("a claim needs an owner");
    return this.#locked((index, write) => {
      const task = this.#find(id, index);
      if (task.status !== "pending") throw new TaskStateError(`task ${id} is already ${statusText(task, owner)}`);
      const open = openBlockersOf(task, index);
      if (open.length > 0) throw new TaskBlockedError(id, open);
      const now = this.#now();
      const claimed: Task = { ...task, status: "in_progress", owner, claimedAtUtc: now, updatedAtUtc: now };
      write(claimed);
      return viewOf(claimed, index);
    });
  }

  /**
   * Completes a task in progress; with `owner`, only when it is the one that
   * claimed it. A completion the TaskCompleted gate refuses leaves the task in
   * progress (TaskRefusedError, with the gate's reason).
   */
  async complete(id: string, owner?: string): Promise<Completion> {
    if (this.#gates.completing) {
      const task = await this.get(id);
      // Only a completion that would happen is put to the gate; the others fail below as they always did.
      if (task.status === "in_progress" && (owner === undefined || task.owner === owner)) {
        const refusal = await this.#gates.completing(task, owner);
        if (refusal !== undefined) throw new TaskRefusedError(`the TaskCompleted hook refused completing ${id}, it stays in progress: ${refusal}`);
      }
    }
    const completion = await this.#locked((index, write) => {
      const task = this.#find(id, index);
      if (task.status === "pending") throw new TaskStateError(`task ${id} is not claimed; claim it before completing it`);
      if (task.status === "completed") throw new TaskStateError(`task ${id} is already ${statusText(task, owner)}`);
      if (owner !== undefined && task.owner !== owner) {
        throw new TaskStateError(`task ${id} is claimed by ${task.owner}, not ${owner}; only its owner can complete it`);
      }
      const now = this.#now();
      const done: Task = { ...task, status: "completed", completedAtUtc: now, updatedAtUtc: now };
      write(done);
      const after = new Map([...index, [id, done]]);
      return { task: viewOf(done, after), unblocked: unblockedBy(id, after).map((other) => viewOf(other, after)) };
    });
    this.#onChange?.();
    return completion;
  }

  /**
   * Puts every task `owner` holds in progress back to pending with `note` (its
   * owner failed and will not finish them): another teammate, or a self-claiming
   * one, takes them from there. Returns the tasks put back.
   */
  async releaseOwnedBy(owner: string, note: string): Promise<TaskView[]> {
    const released = await this.#locked((index, write) => {
      const now = this.#now();
      const back: Task[] = [];
      for (const task of index.values()) {
        if (task.status !== "in_progress" || task.owner !== owner) continue;
        const { owner: _owner, claimedAtUtc: _claimed, ...rest } = task;
        const pending: Task = { ...rest, status: "pending", note, updatedAtUtc: now };
        write(pending);
        back.push(pending);
      }
      const after = new Map([...index, ...back.map((task) => [task.id, task] as const)]);
      return back.map((task) => viewOf(task, after));
    });
    if (released.length > 0) this.#onChange?.();
    return released;
  }

  #find(id: string, index: TaskIndex): Task {
    const task = index.get(id);
    if (!task) throw new UnknownTaskError([id], [...index.keys()]);
    return task;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  #locked<T>(work: (index: TaskIndex, write: (task: Task) => void) => T): Promise<T> {
    return this.#table.locked((tasks, write) => work(indexTasks(tasks), write));
  }
}

export interface FileTaskStoreOptions {
  stateDir: string;
  clock?: Clock;
  lock?: FileLockOptions;
  onChange?: () => void;
}

/**
 * The task graph in files: one file a task under `<state-dir>/tasks/`, every
 * operation under `tasks.lock` (an in-process mutex in front of a
 * cross-process lock).
 */
export class FileTaskTable implements TaskTable {
  readonly files: TaskFiles;
  readonly #lockOptions: FileLockOptions;

  constructor(stateDir: string, lock: FileLockOptions = {}) {
    this.files = new TaskFiles(stateDir);
    this.#lockOptions = lock;
  }

  async locked<T>(work: (tasks: readonly Task[], write: (task: Task) => void) => T): Promise<T> {
    // proper-lockfile creates the lock beside the state dir's other files: the dir must exist.
    ensureDir(this.files.stateDir);
    return withFileLock(this.files.lock, () => work(this.files.readAll(), (task) => this.files.write(task)), this.#lockOptions);
  }
}

/** The task graph of a state dir, in files. */
export class FileTaskStore extends TaskStore {
  readonly files: TaskFiles;

  constructor(options: FileTaskStoreOptions) {
    const table = new FileTaskTable(options.stateDir, options.lock);
    super({ table, ...(options.clock ? { clock: options.clock } : {}), ...(options.onChange ? { onChange: options.onChange } : {}) });
    this.files = table.files;
  }
}

/** "claimed by alice" / "claimed by you (lead)" / "completed by alice", as seen by `who`. */
function statusText(task: Task, who: string | undefined): string {
  const by = task.owner === who ? `you (${who})` : task.owner;
  return `${task.status === "completed" ? "completed" : "claimed"} by ${by}`;
}
