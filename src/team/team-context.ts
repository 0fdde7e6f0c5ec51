import type { AttachmentStore } from "../attachments/attachment-store.ts";
import { type AgentName, assertTeammateName } from "../core/agent-name.ts";
import type { Clock } from "../core/clock.ts";
import { UnknownAgentError } from "../core/errors.ts";
import type { IdSource } from "../core/ids.ts";
import type { MailboxMessage } from "../core/message.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { PermissionRequestContent, PermissionResponse } from "../protocols/protocol-messages.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import type { EventInbox } from "../runtime/event-inbox.ts";
import type { HistoryBackend } from "../runtime/history-store.ts";
import type { JobHandle, JobSupervisor } from "../runtime/job-supervisor.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { GitWorktrees } from "../worktrees/worktrees.ts";
import { RegistryWrites } from "./registry-writes.ts";
import type { TeamEvent } from "./team-event.ts";
import type { TeamRegistry, TeammatePlan, TeammateRecord, TeammateState } from "./team-registry.ts";
import type { TeammateHosting } from "./teammate-hosting.ts";
import type { TeamWakeups } from "./team-watch.ts";
import { TeammateUnavailableError } from "./teammate-errors.ts";

export interface TeammateRuntimeOptions {
  store: MailboxStore;
  /**
   * Where a message over the store's content cap goes (a teammate's long
   * answer): the message then carries its first part and the attachment's id.
   * Absent, such a message is refused (MESSAGE_TOO_LARGE).
   */
  attachments?: AttachmentStore;
  /** The Lead's event inbox: messages to `lead` are published here. */
  inbox: EventInbox;
  supervisor: JobSupervisor;
  registry: TeamRegistry;
  /**
   * The session's histories: a failed teammate's is archived when its name is taken
   * again; a restore reads which turn a teammate finished last (owedIdleNotice).
   */
  histories: Pick<HistoryBackend, "archive" | "wasArchived" | "read">;
  /** Builds (or rebuilds, on restore) the runner of a teammate, with its own history. */
  makeRunner: (teammate: TeammateRecord) => Promise<AgentRunner>;
  /**
   * Which teammates this process may run: only those whose lease it holds. Absent,
   * it runs every teammate (one process, no leases).
   */
  hosting?: TeammateHosting;
  /**
   * "worker" (`agent worker`): runs teammates of a session whose Lead runs in
   * another process — it never takes the Lead's mailbox and spawns nothing.
   */
  role?: "lead" | "worker";
  /** How often teammates run elsewhere are looked at (their work, leases run out, new spawns). */
  watchEveryMs?: number;
  /** Wake-ups for changes other processes make to the team (PostgreSQL's NOTIFY): the look then polls slowly. */
  teamWakeups?: TeamWakeups;
  clock: Clock;
  ids: IdSource;
  observer?: (event: TeamEvent) => void;
  /**
   * The Lead's side of a teammate's permission request: the user on a terminal,
   * else the Lead's rules and mode. Absent: every request is denied.
   */
  decidePermission?: (request: PermissionRequestContent, teammate: AgentName, requestId: string, signal: AbortSignal) => Promise<PermissionResponse>;
  /** How long a call waits for that verdict; PERMISSION_TIMEOUT_MS when absent. */
  permissionTimeoutMs?: number;
  /** The workspace's git worktrees, opened on first need; rejects with WorktreeUnavailableError outside git. */
  worktrees?: () => Promise<GitWorktrees>;
  /** The session's task graph, which self-claiming teammates (`autoClaim`) take tasks from. */
  tasks?: TaskStore;
  /**
   * Whether a teammate's turn takes the Lead's and the operator's messages
   * between its steps (config team.midTurnDelivery, default true); false: they
   * wait for the turn to end.
   */
  midTurnDelivery?: boolean;
  /**
   * Asked when a teammate that worked has an empty mailbox, before it goes idle
   * (the TeammateIdle hook): a returned reason keeps it working, that reason
   * its next prompt; undefined lets it go idle and tell the Lead.
   */
  idleGate?: (teammate: { name: AgentName; role: string; workspace?: string | undefined }) => Promise<string | undefined>;
  /**
   * Asked after a teammate's turn and its idle gate: a team hook (TeammateIdle,
   * TaskCompleted) that answered `continue: false` for it since — the event and
   * the hook's stopReason — stops it as an approved shutdown would.
   */
  takeStop?: (teammate: AgentName) => { event: string; reason: string } | undefined;
}

/** One teammate as this runtime knows it. */
export interface Worker {
  record: TeammateRecord;
  runner: AgentRunner | undefined;
  /** True while its loop runs (claiming and working its mailbox). */
  active: boolean;
  /** The message being worked on, released on close. */
  current: MailboxMessage | undefined;
  /** Counts messages sent to it, so a loop about to stop sees one that came in meanwhile. */
  pokes: number;
  /** Its running loop, under the shared supervisor. */
  job?: JobHandle;
  /** Shut down by an approved shutdown_request: stays shut down in team.json, unlike a closed runtime's teammates. */
  retired?: boolean;
  /**
   * Its result is in the Lead's mailbox and what follows it (its next turn, or
   * its idle notice) is not decided yet: the Lead's event turn waits for that.
   */
  finishing?: boolean;
  /**
   * Its loop found nothing more to do, told the Lead it is idle, and is only
   * acknowledging its last message or storing that in team.json: no longer
   * work the Lead waits for. A message that comes meanwhile keeps the loop going
   * (its state back to running).
   */
  settling?: boolean;
  /** The message whose idle notice went out with its result (TeamMail.deliverResultWithIdle): none is sent again for it. */
  idleNoticed?: string;
  /**
   * The message whose idle notice a killed runtime owes (acked, no notice sent): its
   * loop starts as if it had just worked it, so an empty mailbox sends that notice.
   */
  owedIdle?: string;
  /** The ack of that message, under way while the teammate is already settling. */
  acking?: Promise<unknown>;
  /** Whether its runner was built read-only for plan approval (rebuilt when that changes). */
  runnerInPlanMode?: boolean;
}

/** Whether `record`'s runner is built read-only: its plan is not approved yet. */
export function inPlanMode(record: TeammateRecord): boolean {
  return record.plan !== undefined && record.plan.state !== "approved";
}

/** What the parts of a team runtime reach each other through (they are built after the context). */
export interface TeamHooks {
  /** Starts the teammate's loop unless it already runs (or may not). */
  startWorker(name: AgentName): void;
  /** Feeds the Lead's ready messages to its inbox. */
  pumpLead(): Promise<void>;
}

/**
 * The state the parts of one TeammateRuntime share: its teammates, whether it
 * is closing, who waits for a change, and the small steps every part takes
 * (report an event, store a teammate's state, ask whether it runs here).
 */
export class TeamContext {
  readonly o: TeammateRuntimeOptions;
  readonly workers = new Map<AgentName, Worker>();
  closing = false;
  readonly #hooks: TeamHooks;
  readonly #changeWaiters: (() => void)[] = [];
  readonly #writes = new RegistryWrites();
  /** Teammates whose record the next registry write stores. */
  readonly #dirty = new Set<AgentName>();
  #nextWrite: Promise<void> | undefined;
  /** The write that stores each teammate's record as it is now, until it is done (see stored). */
  readonly #storing = new Map<AgentName, Promise<void>>();
  /** How many spawns and record writes of each teammate are under way here (see mayReplace). */
  readonly #changing = new Map<AgentName, number>();
  /** Counts the local changes ended; each teammate's last one ended at the count it has here. */
  #changesEnded = 0;
  readonly #endedAt = new Map<AgentName, number>();

  constructor(options: TeammateRuntimeOptions, hooks: TeamHooks) {
    this.o = options;
    this.#hooks = hooks;
  }

  get role(): "lead" | "worker" {
    return this.o.role ?? "lead";
  }

  startWorker(name: AgentName): void {
    this.#hooks.startWorker(name);
  }

  pumpLead(): Promise<void> {
    return this.#hooks.pumpLead();
  }

  /** Resolves at the next state change of any teammate. */
  nextChange(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => resolve();
      this.#changeWaiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  changed(): void {
    for (const wake of this.#changeWaiters.splice(0)) wake();
  }

  emit(event: TeamEvent): void {
    this.o.observer?.(event);
  }

  async takeLease(name: AgentName): Promise<boolean> {
    return !this.o.hosting || (await this.o.hosting.take(name));
  }

  /** Whether this process still holds `name`'s lease, asked of the store now (always, without leases). */
  async stillHeld(name: AgentName): Promise<boolean> {
    return !this.o.hosting || (await this.o.hosting.confirm(name));
  }

  /** Whether this process may run `name` once its lease is taken (see TeammateHosting.mayTake). */
  mayRunHere(name: AgentName): boolean {
    return !this.o.hosting || this.o.hosting.mayTake(name);
  }

  runsHere(name: AgentName): boolean {
    return !this.o.hosting || this.o.hosting.holds(name);
  }

  refuseWhenClosing(what: string): void {
    if (this.closing) throw new TeammateUnavailableError(`cannot ${what}: the team is shutting down`);
  }

  /** A teammate that exists and takes messages (not failed, not shut down). */
  usable(name: string): Worker {
    assertTeammateName(name);
    const worker = this.workers.get(name);
    if (!worker) throw new UnknownAgentError(name, `teammates: ${[...this.workers.keys()].join(", ") || "none"}`);
    if (worker.record.state === "failed" || worker.record.state === "shutdown") {
      throw new TeammateUnavailableError(`teammate "${name}" is ${worker.record.state} and takes no messages${worker.record.failure ? ` (${worker.record.failure})` : ""}`);
    }
    return worker;
  }

  async setState(name: AgentName, state: TeammateState, failure?: string, persist = true): Promise<void> {
    const worker = this.workers.get(name);
    if (!worker) return;
    // Already so: resolved once that is stored (a spawn stores a new teammate "running").
    if (worker.record.state === state && failure === undefined) return this.stored(name);
    this.#record(worker, state, failure);
    if (persist) await this.persist(name);
    this.#told(worker, state, failure);
  }

  /**
   * Sets a teammate whose work is over (its idle notice is with the Lead) idle,
   * tells it at once, then stores it: the Lead's event turn does not wait for
   * that write (Worker.settling), and what shows the team — the screen, the
   * stream — has the teammate idle before that turn's answer.
   */
  async settleIdle(name: AgentName): Promise<void> {
    const worker = this.workers.get(name);
    if (!worker) return;
    if (worker.record.state === "idle") return this.stored(name);
    this.#record(worker, "idle");
    this.#told(worker, "idle");
    await this.persist(name);
  }

  #record(worker: Worker, state: TeammateState, failure?: string): void {
    worker.record = {
      ...worker.record,
      state,
      updatedAtUtc: this.o.clock.now().toISOString(),
      ...(failure !== undefined ? { failure } : {}),
    };
  }

  #told(worker: Worker, state: TeammateState, failure?: string): void {
    this.emit({ type: "teammate", name: worker.record.name, role: worker.record.role, state, ...(failure !== undefined ? { reason: failure } : {}) });
    this.changed();
  }

  async setPlan(name: AgentName, plan: TeammatePlan): Promise<void> {
    const worker = this.workers.get(name);
    if (!worker) return;
    worker.record = { ...worker.record, plan, updatedAtUtc: this.o.clock.now().toISOString() };
    await this.persist(name);
    this.emit({ type: "teammate", name, role: worker.record.role, state: worker.record.state, plan: plan.state });
    this.changed();
  }

  /**
   * Stores the teammate as it is now (removed when it is gone), one write after
   * another. Group commit: the names asked for while a write is under way are
   * stored together by the next one (32 spawns at once are a few writes of
   * team.json, not 64); each caller resolves once its teammate is durable.
   */
  persist(name: AgentName): Promise<void> {
    const end = this.changing(name);
    this.#dirty.add(name);
    this.#nextWrite ??= this.#writes.chain(async () => {
      // From here on a persist asks for the write after this one: this one may
      // already have read the state it asks about.
      this.#nextWrite = undefined;
      const names = [...this.#dirty];
      this.#dirty.clear();
      const put: TeammateRecord[] = [];
      const removed: AgentName[] = [];
      const fences = new Map<string, string>();
      for (const each of names) {
        const worker = this.workers.get(each);
        // Written only while this process still holds the lease it ran the teammate
        // under. A spawn's first record (its task pending) is written as the lease
        // is taken, and no other process touches a teammate whose task is pending.
        const token = this.o.hosting?.fenceOf(each);
        if (token !== undefined && worker?.record.pendingTaskId === undefined) fences.set(each, token);
        if (!worker) {
          removed.push(each);
          continue;
        }
        // A closed runtime's "shutdown" belongs to this process only: the next one
        // restores the teammate. One that approved a shutdown request stays shut down.
        const { record, retired } = worker;
        put.push(record.state === "shutdown" && !retired ? { ...record, state: "idle" } : { ...record });
      }
      const refused = await this.o.registry.change(put, removed, fences);
      for (const name of refused) this.#refused(name);
    });
    return this.#tracked(name, this.#nextWrite, end);
  }

  /** `write` is the one storing `name` as it is now until it settles; `end` ends the change then. */
  #tracked(name: AgentName, write: Promise<void>, end: () => void): Promise<void> {
    this.#storing.set(name, write);
    const done = () => {
      if (this.#storing.get(name) === write) this.#storing.delete(name);
      end();
    };
    write.then(done, done);
    return write;
  }

  /**
   * Marks a change of `name`'s record under way here (a spawn, a write); the
   * returned function ends it. While one is under way, and for a read of the
   * store begun before it ended, the stored row is older than the record here.
   */
  changing(name: AgentName): () => void {
    this.#changing.set(name, (this.#changing.get(name) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.#changing.get(name) ?? 1) - 1;
      if (left > 0) this.#changing.set(name, left);
      else this.#changing.delete(name);
      this.#changesEnded += 1;
      this.#endedAt.set(name, this.#changesEnded);
    };
  }

  /** Taken before reading the store: what mayReplace compares against. */
  changeMark(): number {
    return this.#changesEnded;
  }

  /**
   * Whether a stored row of `name` read after `mark` may replace the record
   * here: no change of it is under way, and none ended after the read began (a
   * row read then may be from before that change). A sync that replaced a spawn's
   * record while its write was queued had that write store the row's
   * `pendingTaskId` again: no worker took the teammate, and the Lead waited for ever.
   */
  mayReplace(name: AgentName, mark: number): boolean {
    return !this.#changing.has(name) && (this.#endedAt.get(name) ?? 0) <= mark;
  }

  /**
   * Another process holds `name`'s lease now (this one stalled past it): its
   * record is that holder's to write. Said, and the loss learned at once.
   */
  #refused(name: AgentName): void {
    const state = this.workers.get(name)?.record.state ?? "removed";
    this.o.hosting?.warn(`did not store teammate ${name} as ${state}: this process no longer holds its lease; the process that took it over writes it now`);
    void this.o.hosting?.confirm(name);
  }

  /**
   * Stores the teammate's record as it is now and sends `task` with it, in one
   * transaction (TeamRegistry.changeWithTask), after every write asked for
   * before. For a teammate another process runs: not fenced.
   */
  persistWithTask(name: AgentName, task: MailboxMessage): Promise<void> {
    const send = this.o.registry.changeWithTask;
    if (!send) return Promise.reject(new Error("this store cannot send a task with a teammate's record"));
    const end = this.changing(name);
    const write = this.#writes.chain(async () => {
      const worker = this.workers.get(name);
      if (!worker) throw new TeammateUnavailableError(`teammate "${name}" was removed before its task went out`);
      await send([{ ...worker.record }], task);
    });
    return this.#tracked(name, write, end);
  }

  /** Resolves once the teammate's record as it is now is in team.json (at once when no write of it is under way). */
  stored(name: AgentName): Promise<void> {
    return this.#storing.get(name) ?? Promise.resolve();
  }
}
