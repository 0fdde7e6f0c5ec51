import { type Clock, systemClock } from "../core/clock.ts";
import { UsageError } from "../core/errors.ts";
import { ensureDir } from "../storage/atomic-file.ts";
import { type FileLockOptions, withFileLock } from "../storage/file-lock.ts";
import { type Task, type TaskId, type TaskStatus, type TaskView, taskNumber } from "./task.ts";
import { TaskBlockedError, TaskDependencyError, TaskStateError, UnknownTaskError } from "./task-errors.ts";
import { TaskFiles } from "./task-files.ts";
import { type TaskIndex, cycleThrough, indexTasks, openBlockersOf, unblockedBy, viewOf } from "./task-graph.ts";

export interface NewTask {
  subject: string;
  description?: string | undefined;
  /** Ids of tasks that must be completed before this one can be claimed. */
  blockedBy?: readonly string[] | undefined;
}

export interface TaskStoreOptions {
  stateDir: string;
  clock?: Clock;
  lock?: FileLockOptions;
  /** Told after a task is created or completed: work may have become free to claim (self-claiming teammates wait for it). */
  onChange?: () => void;
}

export interface Completion {
  task: TaskView;
  /** Tasks this completion left with no open blocker, in id order. */
  unblocked: TaskView[];
}

/**
 * The persistent task graph: one file a task under `<state-dir>/tasks/`. Every
 * operation reads the graph and writes under `tasks.lock` (an in-process mutex
 * in front of a cross-process lock), so a claim's check and its write are one
 * step for every process: of concurrent claimers exactly one wins. Reads take
 * the lock too, so a listing never mixes states from before and after a write.
 * Each operation reads every task file; task graphs are tens of tasks, not
 * thousands, and a whole read is what lets blockers be checked at all.
 */
export class FileTaskStore {
  readonly files: TaskFiles;
  readonly #clock: Clock;
  readonly #lockOptions: FileLockOptions;
  readonly #onChange: (() => void) | undefined;

  constructor(options: TaskStoreOptions) {
    this.files = new TaskFiles(options.stateDir);
    this.#clock = options.clock ?? systemClock;
    this.#lockOptions = options.lock ?? {};
    this.#onChange = options.onChange;
  }

  async create(input: NewTask): Promise<TaskView> {
    if (input.subject.trim() === "") throw new UsageError("a task needs a non-empty subject");
    const created = await this.#locked((index) => {
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
      this.files.write(task);
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
    return this.#locked((index) => {
      const task = this.#find(id, index);
      if (task.status !== "pending") throw new TaskStateError(`task ${id} is already ${statusText(task, owner)}`);
      const open = openBlockersOf(task, index);
      if (open.length > 0) throw new TaskBlockedError(id, open);
      const now = this.#now();
      const claimed: Task = { ...task, status: "in_progress", owner, claimedAtUtc: now, updatedAtUtc: now };
      this.files.write(claimed);
      return viewOf(claimed, index);
    });
  }

  /** Completes a task in progress; with `owner`, only when it is the one that claimed it. */
  async complete(id: string, owner?: string): Promise<Completion> {
    const completion = await this.#locked((index) => {
      const task = this.#find(id, index);
      if (task.status === "pending") throw new TaskStateError(`task ${id} is not claimed; claim it before completing it`);
      if (task.status === "completed") throw new TaskStateError(`task ${id} is already ${statusText(task, owner)}`);
      if (owner !== undefined && task.owner !== owner) {
        throw new TaskStateError(`task ${id} is claimed by ${task.owner}, not ${owner}; only its owner can complete it`);
      }
      const now = this.#now();
      const done: Task = { ...task, status: "completed", completedAtUtc: now, updatedAtUtc: now };
      this.files.write(done);
      const after = new Map([...index, [id, done]]);
      return { task: viewOf(done, after), unblocked: unblockedBy(id, after).map((other) => viewOf(other, after)) };
    });
    this.#onChange?.();
    return completion;
  }

  #find(id: string, index: TaskIndex): Task {
    const task = index.get(id);
    if (!task) throw new UnknownTaskError([id], [...index.keys()]);
    return task;
  }

  #now(): string {
    return this.#clock.now().toISOString();
  }

  async #locked<T>(work: (index: TaskIndex) => T): Promise<T> {
    // proper-lockfile creates the lock beside the state dir's other files: the dir must exist.
    ensureDir(this.files.stateDir);
    return withFileLock(this.files.lock, () => work(indexTasks(this.files.readAll())), this.#lockOptions);
  }
}

/** "claimed by alice" / "claimed by you (lead)" / "completed by alice", as seen by `who`. */
function statusText(task: Task, who: string | undefined): string {
  const by = task.owner === who ? `you (${who})` : task.owner;
  return `${task.status === "completed" ? "completed" : "claimed"} by ${by}`;
}
