import { z } from "zod";
import { UtcInstant } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const TASK_STATUSES = ["pending", "in_progress", "completed"] as const;
export const TaskStatus = lazySchema(() => z.enum(TASK_STATUSES));
export type TaskStatus = z.infer<typeof TaskStatus>;

// Short ids ("t1", "t2", …) read well to a model and in a log; they are
// allocated under the store's lock, so two processes never hand out the same one.
// The pattern also keeps an id usable as a file name with no path pieces.
export const TASK_ID_PATTERN = /^t[1-9][0-9]{0,8}$/;
export const TaskId = lazySchema(() => z.string().regex(TASK_ID_PATTERN, 'a task id is "t" and a number, e.g. "t3"'));
export type TaskId = z.infer<typeof TaskId>;

/** The number in a task id, for allocating the next one and for sorting. */
export function taskNumber(id: TaskId): number {
  return Number(id.slice(1));
}

/** One task file, `<state-dir>/tasks/<id>.json`. */
export const Task = lazySchema(() =>
  z
    .strictObject({
      id: TaskId,
      subject: z.string().min(1),
      description: z.string().optional(),
      blockedBy: z.array(TaskId),
      status: TaskStatus,
      /** The identity that claimed it; set by claim and kept after completion. */
      owner: z.string().min(1).optional(),
      createdAtUtc: UtcInstant,
      updatedAtUtc: UtcInstant,
      claimedAtUtc: UtcInstant.optional(),
      completedAtUtc: UtcInstant.optional(),
      /** Why the task went back to pending (its owner failed), for whoever claims it next. */
      note: z.string().optional(),
    })
    // A file that says "in progress" without saying who holds it cannot be acted
    // on safely (who may complete it?), so it is corrupt rather than guessed at.
    .refine((task) => task.status === "pending" || (task.owner !== undefined && task.claimedAtUtc !== undefined), {
      message: "a claimed task needs owner and claimedAtUtc",
      path: ["owner"],
    })
    .refine((task) => (task.status === "completed") === (task.completedAtUtc !== undefined), {
      message: "completedAtUtc is set exactly when the task is completed",
      path: ["completedAtUtc"],
    })
    .refine((task) => !task.blockedBy.includes(task.id), { message: "a task cannot block itself", path: ["blockedBy"] }),
);
export type Task = z.infer<typeof Task>;

/** A task with what the rest of the graph says about it. */
export interface TaskView extends Task {
  /** Blockers that are not completed yet (a blocker with no file counts as open). */
  openBlockers: TaskId[];
  /** Whether `openBlockers` is non-empty: it cannot be claimed yet. */
  blocked: boolean;
}
