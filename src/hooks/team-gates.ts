import type { HookEvent } from "../config/config.ts";
import type { Hooks } from "./types.ts";

/** A task as the TaskCreated and TaskCompleted hooks are told of it (no id before it is created). */
export interface GatedTask {
  id?: string;
  subject: string;
  description?: string | undefined;
  owner?: string | undefined;
  blockedBy?: readonly string[] | undefined;
}

export interface TeamGatesOptions {
  hooks: Hooks & { has(event: HookEvent): boolean };
  /** The Lead's workspace, where the hooks run unless the teammate has a worktree of its own. */
  workspace: string;
  /** Each hook's warning, reported as the agent's whose event it was. */
  warn: (agent: string) => (message: string) => void;
  /** The Lead's name, which is no teammate: its events carry no `teammate_name`. */
  lead: string;
}

/** A team hook's `continue: false` for a teammate: which event's hook said so, and its `stopReason`. */
export interface TeammateStop {
  event: HookEvent;
  reason: string;
}

/**
 * The team's hooks that may say no (Claude Code's TeammateIdle, TaskCreated,
 * TaskCompleted): each runs its event's hooks and returns the reason a hook
 * refused with (exit 2 and its stderr, or JSON `decision: "block"` and its
 * `reason`), undefined when none did. Awaited: what is refused has not happened.
 * A hook answering `continue: false` for a teammate's event asks for that
 * teammate to stop: kept until its loop takes it (takeStop).
 */
export class TeamGates {
  readonly #o: TeamGatesOptions;
  readonly #stops = new Map<string, TeammateStop>();

  constructor(options: TeamGatesOptions) {
    this.#o = options;
  }

  /** Whether a TeammateIdle hook is configured: without one a teammate's going idle is decided by its mailbox alone. */
  guardsIdle(): boolean {
    return this.#o.hooks.has("TeammateIdle");
  }

  /** A teammate with an empty mailbox is about to go idle; a refusal keeps it working, the reason its next prompt. */
  teammateIdle(teammate: { name: string; role: string; workspace?: string | undefined }): Promise<string | undefined> {
    return this.#gate("TeammateIdle", teammate.name, { teammate: teammate.name, role: teammate.role }, teammate.workspace);
  }

  /** `by` asks to create `task`; a refusal means it is not created. */
  taskCreated(task: GatedTask, by: string | undefined): Promise<string | undefined> {
    return this.#gate("TaskCreated", by ?? this.#o.lead, { task: taskKeys(task), ...this.#teammate(by) });
  }

  /** `by` asks to complete `task`; a refusal leaves it in progress. */
  taskCompleted(task: GatedTask, by: string | undefined): Promise<string | undefined> {
    return this.#gate("TaskCompleted", by ?? task.owner ?? this.#o.lead, { task: taskKeys(task), ...this.#teammate(by ?? task.owner) });
  }

  /** The stop a team hook asked for `teammate` since the last call, given once. */
  takeStop(teammate: string): TeammateStop | undefined {
    const stop = this.#stops.get(teammate);
    this.#stops.delete(teammate);
    return stop;
  }

  #teammate(agent: string | undefined): { teammate?: string } {
    return agent === undefined || agent === this.#o.lead || agent.includes("/") ? {} : { teammate: agent };
  }

  async #gate(event: HookEvent, identity: string, payload: Record<string, unknown>, workspace?: string): Promise<string | undefined> {
    const { hooks, warn } = this.#o;
    if (!hooks.has(event)) return undefined;
    const outcome = await hooks.run(event, { identity, ...payload }, { workspace: workspace ?? this.#o.workspace });
    outcome.warnings.forEach(warn(identity));
    const teammate = payload.teammate;
    if (outcome.stopped !== undefined && typeof teammate === "string") this.#stops.set(teammate, { event, reason: outcome.stopped });
    return outcome.blocked;
  }
}

function taskKeys(task: GatedTask): Record<string, unknown> {
  return {
    ...(task.id !== undefined ? { id: task.id } : {}),
    subject: task.subject,
    ...(task.description !== undefined ? { description: task.description } : {}),
    ...(task.owner !== undefined ? { owner: task.owner } : {}),
    ...(task.blockedBy && task.blockedBy.length > 0 ? { blockedBy: [...task.blockedBy] } : {}),
  };
}
