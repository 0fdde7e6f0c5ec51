// How tasks read to the model: one line a task that says at a glance whether it
// can be claimed, and a few more lines when it asks about one task.
import type { TaskView } from "../tasks/task.ts";

function state(task: TaskView): string {
  if (task.status !== "pending") return `${task.status}, owner ${task.owner}`;
  return task.blocked ? `pending, blocked by ${task.openBlockers.join(", ")}` : "pending, ready to claim";
}

/** e.g. `t3 [pending, blocked by t1, t2] Write the tests`. */
export function taskLine(task: TaskView): string {
  const note = task.status === "pending" && task.note !== undefined ? ` (${task.note})` : "";
  return `${task.id} [${state(task)}] ${task.subject}${note}`;
}

export function taskLines(tasks: readonly TaskView[]): string {
  return tasks.map(taskLine).join("\n");
}

export function taskDetail(task: TaskView): string {
  const blockers = task.blockedBy.map((id) => `${id} (${task.openBlockers.includes(id) ? "open" : "completed"})`);
  const times = [
    `created ${task.createdAtUtc}`,
    ...(task.claimedAtUtc ? [`claimed ${task.claimedAtUtc}`] : []),
    ...(task.completedAtUtc ? [`completed ${task.completedAtUtc}`] : []),
  ];
  return [
    taskLine(task),
    `blockedBy: ${blockers.length > 0 ? blockers.join(", ") : "none"}`,
    times.join(", "),
    ...(task.note === undefined ? [] : [`note: ${task.note}`]),
    ...(task.description === undefined ? [] : ["", task.description]),
  ].join("\n");
}
