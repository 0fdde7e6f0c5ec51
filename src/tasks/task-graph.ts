// Pure questions about the dependency graph; the store asks them under its lock
// about the tasks it has just read.
import type { Task, TaskId, TaskStatus, TaskView } from "./task.ts";

export type TaskIndex = ReadonlyMap<TaskId, Task>;

export function indexTasks(tasks: readonly Task[]): TaskIndex {
  return new Map(tasks.map((task) => [task.id, task]));
}

/** Blockers of `task` that are not completed, with their status ("missing" when no file has the id). */
export function openBlockersOf(task: Task, index: TaskIndex): { id: TaskId; status: TaskStatus | "missing" }[] {
  return task.blockedBy.flatMap((id) => {
    const status = index.get(id)?.status ?? "missing";
    return status === "completed" ? [] : [{ id, status }];
  });
}

export function viewOf(task: Task, index: TaskIndex): TaskView {
  const openBlockers = openBlockersOf(task, index).map((blocker) => blocker.id);
  return { ...task, openBlockers, blocked: openBlockers.length > 0 };
}

/**
 * A path of blockers that leads from `start` back to itself, e.g. ["t2", "t1", "t2"],
 * or undefined. A cycle can only come from hand-edited files (a new task's id is
 * fresh, so nothing can point at it yet), but one would leave every task on it
 * blocked forever, so it is looked for rather than assumed away.
 */
export function cycleThrough(start: TaskId, blockersOf: (id: TaskId) => readonly TaskId[]): TaskId[] | undefined {
  const visited = new Set<TaskId>();
  const walk = (id: TaskId, path: TaskId[]): TaskId[] | undefined => {
    for (const next of blockersOf(id)) {
      if (next === start) return [...path, next];
      if (visited.has(next)) continue;
      visited.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

/** Pending tasks that waited on `completed` and, now it is done, wait on nothing. */
export function unblockedBy(completed: TaskId, index: TaskIndex): Task[] {
  return [...index.values()].filter(
    (task) => task.status === "pending" && task.blockedBy.includes(completed) && openBlockersOf(task, index).length === 0,
  );
}
