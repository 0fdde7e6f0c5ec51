import { LEAD } from "../core/agent-name.ts";
import type { Clock } from "../core/clock.ts";
import { DuplicateMessageIdError } from "../core/errors.ts";
import { createMessage, type MailboxMessage } from "../core/message.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import { type TaskView, taskNumber } from "../tasks/task.ts";
import { TaskBlockedError, TaskStateError } from "../tasks/task-errors.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import { derivedId } from "./derived-id.ts";

export interface AutoClaimOptions {
  tasks: TaskStore;
  store: MailboxStore;
  clock: Clock;
  /** Sends a message built here (the runtime reports it and wakes the Lead); a duplicate id throws DuplicateMessageIdError. */
  send: (message: MailboxMessage) => Promise<void>;
}

/**
 * Self-claiming teammates: an idle teammate takes the oldest unblocked pending
 * task of the task graph (the store's claim: of concurrent claimers, in this
 * process or another, one wins), tells the Lead (`task_claimed`) and puts the
 * task in its own mailbox, where its worker runs it as a turn like any message.
 *
 * Every message of a claim has an id derived from the task id, so a runtime
 * killed anywhere between the claim and the sends sends the missing ones again
 * (claimNext finds the task in progress under the teammate's name) and the ones
 * that went out are refused as duplicates: the Lead hears of a claim once, the
 * teammate works a task once.
 */
export class AutoClaim {
  readonly #o: AutoClaimOptions;

  constructor(options: AutoClaimOptions) {
    this.#o = options;
  }

  /** The id of the mailbox message that carries task `taskId` to the teammate that claimed it. */
  static taskMessageId(taskId: string): string {
    return derivedId(taskId, "claimed-task");
  }

  /**
   * Gives `name` its next task: one it claimed whose message never went out (a
   * crash), else the oldest unblocked pending one it can win. Returns whether a
   * task message was put in its mailbox.
   */
  async claimNext(name: string): Promise<boolean> {
    const tasks = await this.#o.tasks.list();
    for (const task of tasks.filter((t) => t.status === "in_progress" && t.owner === name)) {
      if (await this.#deliver(name, task)) return true;
    }
    const ready = tasks.filter((t) => t.status === "pending" && !t.blocked).sort(oldestFirst);
    for (const task of ready) {
      let claimed: TaskView;
      try {
        claimed = await this.#o.tasks.claim(task.id, name);
      } catch (error) {
        // Another claimer won it, or its blocker was reopened meanwhile: try the next.
        if (error instanceof TaskStateError || error instanceof TaskBlockedError) continue;
        throw error;
      }
      if (await this.#deliver(name, claimed)) return true;
    }
    return false;
  }

  /** After the turn on a self-claimed task: marks it completed, unless the teammate already did (complete_task). */
  async complete(name: string, taskId: string): Promise<void> {
    try {
      await this.#o.tasks.complete(taskId, name);
    } catch (error) {
      if (!(error instanceof TaskStateError)) throw error;
      const task = await this.#o.tasks.get(taskId);
      if (task.status !== "completed" || task.owner !== name) throw error;
    }
  }

  /** Sends the claim notice to the Lead, then the task to `name`; returns whether the task message is new. */
  async #deliver(name: string, task: TaskView): Promise<boolean> {
    const taskMessageId = AutoClaim.taskMessageId(task.id);
    // Sent before (this runtime or a killed one): its worker has it or had it.
    if (await this.#o.store.find(taskMessageId)) return false;
    await this.#sendOnce({
      id: derivedId(task.id, "task-claimed"),
      sender: name,
      recipient: LEAD,
      kind: "task_claimed",
      content: `${name} claimed task ${task.id}: ${task.subject}`,
      taskId: task.id,
    });
    return this.#sendOnce({ id: taskMessageId, sender: name, recipient: name, kind: "task", content: taskPrompt(task), taskId: task.id });
  }

  async #sendOnce(fields: Parameters<typeof createMessage>[0] & { id: string }): Promise<boolean> {
    const { id, ...rest } = fields;
    const message = createMessage(rest, { clock: this.#o.clock, ids: { next: () => id } });
    try {
      await this.#o.send(message);
      return true;
    } catch (error) {
      if (error instanceof DuplicateMessageIdError) return false;
      throw error;
    }
  }
}

function oldestFirst(a: TaskView, b: TaskView): number {
  if (a.createdAtUtc !== b.createdAtUtc) return a.createdAtUtc < b.createdAtUtc ? -1 : 1;
  return taskNumber(a.id) - taskNumber(b.id);
}

/** What the teammate is asked: the task as the graph has it, and how it ends. */
export function taskPrompt(task: TaskView): string {
  return [
    `You claimed task ${task.id} of the shared task graph: ${task.subject}`,
    ...(task.description ? ["", task.description] : []),
    "",
    "Do it now. When it is done, answer with what you did: your answer goes to the Lead as the task's result and the task is marked completed.",
  ].join("\n");
}
