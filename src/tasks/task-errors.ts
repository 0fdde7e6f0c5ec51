import { AgentError } from "../core/errors.ts";

/** Every refusal of the task graph; the tools turn them into error results for the model. */
export abstract class TaskError extends AgentError {
  readonly category = "usage" as const;
}

function known(ids: readonly string[]): string {
  return ids.length === 0 ? "there are no tasks yet" : `known tasks: ${ids.join(", ")}`;
}

export class UnknownTaskError extends TaskError {
  readonly code = "UNKNOWN_TASK";
  constructor(
    readonly taskIds: readonly string[],
    knownIds: readonly string[],
    role = "task",
  ) {
    const plural = taskIds.length > 1 ? "s" : "";
    super(`unknown ${role}${plural} ${taskIds.join(", ")}; ${known(knownIds)}`);
  }
}

/** A dependency that would make the graph impossible to finish: a self-reference or a cycle. */
export class TaskDependencyError extends TaskError {
  readonly code = "TASK_DEPENDENCY";
}

/** A claim of a task whose blockers are not all completed. */
export class TaskBlockedError extends TaskError {
  readonly code = "TASK_BLOCKED";
  constructor(
    readonly taskId: string,
    /** Each open blocker with its status ("missing" when its file is gone). */
    readonly open: readonly { id: string; status: string }[],
  ) {
    const list = open.map((blocker) => `${blocker.id} (${blocker.status})`).join(", ");
    super(`task ${taskId} is blocked by ${list}; it can be claimed once they are completed`);
  }
}

/** A claim or completion the task's status or owner does not allow. */
export class TaskStateError extends TaskError {
  readonly code = "TASK_STATE";
}

/** A creation or completion a hook refused (TaskCreated, TaskCompleted exiting 2): the reason is the hook's. */
export class TaskRefusedError extends TaskError {
  readonly code = "TASK_REFUSED";
}
