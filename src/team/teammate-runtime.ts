import { type AgentName, LEAD, assertAgentName, assertTeammateName } from "../core/agent-name.ts";
import type { Clock } from "../core/clock.ts";
import { AgentError, DuplicateMessageIdError, UnknownAgentError } from "../core/errors.ts";
import type { IdSource } from "../core/ids.ts";
import { createMessage, type MailboxMessage, type MessageKind } from "../core/message.ts";
import { eventEnvelope, eventFromMessage } from "../core/runtime-event.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import type { EventInbox } from "../runtime/event-inbox.ts";
import type { JobHandle, JobSupervisor } from "../runtime/job-supervisor.ts";
import {
  type PermissionRequestContent,
  type PermissionResponse,
  PermissionRequestContent as PermissionRequestSchema,
  PermissionResponse as PermissionResponseSchema,
  PlanApprovalResponse,
  ShutdownResponse,
  describeProtocol,
  isProtocolKind,
  parseProtocolContent,
  requestIdOf,
  tryProtocolContent,
} from "../protocols/protocol-messages.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { TeamRegistry, TeammatePlan, TeammateRecord, TeammateState } from "./team-registry.ts";
import type { TeammateHosting } from "./teammate-hosting.ts";
import { type TeamWatchTarget, watchTeam } from "./team-watch.ts";
import type { Isolation } from "../worktrees/teammate-worktree.ts";
import type { GitWorktrees } from "../worktrees/worktrees.ts";
import { WorktreeUnavailableError } from "../worktrees/worktree-errors.ts";
import { AutoClaim } from "./auto-claim.ts";
import { derivedId } from "./derived-id.ts";

// Tests and fixtures know it from here.
export { derivedId };
import type { HistoryBackend } from "../runtime/history-store.ts";

const ACK_ATTEMPTS = 3;
const ACK_RETRY_MS = 50;
/** How long a teammate's call waits for the verdict on its permission request (docs/team-protocols.md). */
export const PERMISSION_TIMEOUT_MS = 5 * 60_000;
/** A permission request's input is shown to the person asked up to this size; a larger one is left out. */
const PERMISSION_INPUT_MAX_CHARS = 64 * 1024;
/** How often a teammate in `agent worker` looks for the verdict the Lead's process wrote. */
const PERMISSION_POLL_MS = 200;

export class TeammateUnavailableError extends AgentError {
  readonly code = "TEAMMATE_UNAVAILABLE";
  readonly category = "usage" as const;
}

/** What the team reports as it works, for progress and `stream-json`. */
export type TeamEvent =
  | { type: "teammate"; name: string; role: string; state: TeammateState; reason?: string; plan?: TeammatePlan["state"] }
  | { type: "protocol"; kind: MessageKind; from: string; to: string; id: string; requestId: string; summary: string }
  | { type: "mailbox"; op: "send" | "claim" | "ack" | "release" | "quarantine"; agent: string; id: string; from: string; kind: MessageKind };

export interface TeammateRuntimeOptions {
  store: MailboxStore;
  /** The Lead's event inbox: messages to `lead` are published here. */
  inbox: EventInbox;
  supervisor: JobSupervisor;
  registry: TeamRegistry;
  /** The session's histories: a failed teammate's is archived when its name is taken again. */
  histories: Pick<HistoryBackend, "archive" | "wasArchived">;
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
}

/** How often a runtime with teammates run elsewhere looks at them. */
export const DEFAULT_WATCH_MS = 200;

interface Worker {
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
  /** Whether its runner was built read-only for plan approval (rebuilt when that changes). */
  runnerInPlanMode?: boolean;
}

/**
 * The teammates of one runtime: spawning, messaging, each teammate's worker loop
 * (claim → run with the message id as idempotency key → result to the Lead →
 * ack), their states, the Lead's mailbox feeding the Lead's inbox, and close.
 */
export class TeammateRuntime implements TeamWatchTarget {
  readonly #o: TeammateRuntimeOptions;
  readonly #workers = new Map<AgentName, Worker>();
  readonly #changeWaiters: (() => void)[] = [];
  #closing = false;
  #pumping: Promise<void> | undefined;
  #pumpAgain = false;
  /** Teammates run by another process have work (from the last look at the store). */
  #busyElsewhere = false;
  #watch: JobHandle | undefined;
  /** Teammates' calls waiting for the verdict on their permission request, by request id. */
  readonly #permissionWaiters = new Map<string, (verdict: PermissionResponse) => void>();
  readonly #autoClaim: AutoClaim | undefined;
  #writes: Promise<void> = Promise.resolve();

  constructor(options: TeammateRuntimeOptions) {
    this.#o = options;
    this.#autoClaim = options.tasks
      ? new AutoClaim({ tasks: options.tasks, store: options.store, clock: options.clock, send: (message) => this.#sendBuilt(message) })
      : undefined;
  }

  /**
   * Wakes the idle self-claiming teammates: the task graph changed (a task was
   * created, or completed and so perhaps unblocked others).
   */
  pokeAutoClaimers(): void {
    for (const [name, worker] of this.#workers) {
      if (worker.record.autoClaim && !worker.active) this.#startWorker(name);
    }
  }

  get inbox(): EventInbox {
    return this.#o.inbox;
  }

  get supervisor(): JobSupervisor {
    return this.#o.supervisor;
  }

  /** Every teammate and its state. */
  list(): TeammateRecord[] {
    return [...this.#workers.values()].map((worker) => ({ ...worker.record }));
  }

  /** Whether any teammate is working, here or in another process (idle ones are not pending work). */
  hasPendingWork(): boolean {
    return this.#busyElsewhere || [...this.#workers.values()].some((worker) => worker.active);
  }

  get role(): "lead" | "worker" {
    return this.#o.role ?? "lead";
  }

  /** Resolves at the next state change of any teammate. */
  nextChange(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => resolve();
      this.#changeWaiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Restores the team from team.json: every teammate that did not fail gets its
   * runner back (with its history) and its interrupted work recovered; the ones
   * with messages waiting start working. The Lead's processing messages are
   * recovered and fed to its inbox.
   */
  async restore(): Promise<void> {
    const stored = await this.#o.registry.read();
    if (this.role === "worker") {
      // The Lead's process owns spawning, the Lead's mailbox and team.json's
      // clean-ups: a worker only learns the team and takes what it may run.
      this.sync(stored);
      this.#ensureWatch();
      return;
    }
    const records: TeammateRecord[] = [];
    for (const { pendingTaskId, ...record } of stored) {
      // A spawn killed before its first task went out: undo it, so the Lead's
      // resumed turn (told its spawn call did not finish) can spawn the name again.
      if (pendingTaskId !== undefined && !(await this.#o.store.find(pendingTaskId))) continue;
      // A plan recorded as submitted whose request never went out: not submitted.
      if (record.plan?.state === "submitted" && record.plan.requestId && !(await this.#o.store.find(record.plan.requestId))) {
        record.plan = { state: "drafting" };
      }
      records.push(record);
    }
    for (const record of records) {
      const state: TeammateState = record.state === "failed" || record.state === "shutdown" ? record.state : "idle";
      const retired = state === "shutdown";
      this.#workers.set(record.name, { record: { ...record, state }, runner: undefined, active: false, current: undefined, pokes: 0, retired });
      if (retired) await this.#settleRetired(record.name);
      // A teammate a live worker holds keeps its work: recovering it here would
      // take back the message that worker is answering.
      else if (state !== "failed" && !(await this.#takeLease(record.name))) continue;
      else if (state !== "failed" && record.worktree && !(await this.#restoreWorktree(record))) continue;
      else if (state !== "failed") {
        await this.#o.store.recover(record.name);
        this.#startWorker(record.name);
      }
    }
    this.#ensureWatch();
    // A teammate a killed runtime left "running" with no work to pick up again
    // never changes state here: without this write team.json would keep saying
    // "running" after this runtime has finished.
    for (const record of stored) {
      const kept = this.#workers.get(record.name);
      if (!kept) await this.#o.registry.remove(record.name);
      // Changed here too: one whose worktree could not be restored is failed now.
      // A spawn whose task did go out is complete; a teammate a live worker runs keeps the state it wrote.
      else if (!this.#runsHere(record.name)) {
        if (record.pendingTaskId) await this.#persist(record.name);
      } else if (record.state === "running" || record.pendingTaskId || kept.record.state !== record.state || kept.record.plan?.state !== record.plan?.state) await this.#persist(record.name);
    }
    await this.#o.store.recover(LEAD);
    await this.pumpLead();
  }

  /**
   * Creates a teammate and gives it its first task. Invalid, reserved or taken
   * names fail before any work; of two concurrent spawns of one name exactly one
   * wins. A failed teammate's name is free again; `previous` says what the name
   * was before, when it was failed or removed. Returns at once: the teammate works in the background.
   */
  async spawn(
    name: string,
    role: string,
    prompt: string,
    settings: { agent?: string; model?: string; planModeRequired?: boolean; isolation?: Isolation; autoClaim?: boolean } = {},
  ): Promise<TeammateRecord & { previous?: string }> {
    this.#refuseWhenClosing("spawn a teammate");
    assertTeammateName(name);
    if (role.trim().length === 0) throw new TeammateUnavailableError("a teammate needs a role, e.g. \"backend\" or \"tester\"");
    if (prompt.length === 0) throw new TeammateUnavailableError("a teammate needs a first task (prompt)");
    const existing = this.#workers.get(name);
    if (existing && existing.record.state !== "failed" && !existing.retired) {
      throw new TeammateUnavailableError(`a teammate named "${name}" already exists; pick another name or send_message to it`);
    }
    const at = this.#o.clock.now();
    const now = at.toISOString();
    // The first task's id is in team.json before the task is sent: a runtime
    // killed between the two leaves a teammate whose task never went out, which
    // restore() can tell and undo (see there).
    const taskId = this.#o.ids.next();
    // Reserved synchronously, before any await: a concurrent spawn of the same
    // name sees it and fails.
    const worker: Worker = {
      record: {
        name,
        role,
        state: "idle",
        createdAtUtc: now,
        updatedAtUtc: now,
        pendingTaskId: taskId,
        ...(settings.agent !== undefined ? { agent: settings.agent } : {}),
        ...(settings.model !== undefined ? { model: settings.model } : {}),
        ...(settings.planModeRequired ? { plan: { state: "drafting" as const } } : {}),
        ...(settings.autoClaim ? { autoClaim: true } : {}),
      },
      runner: undefined,
      active: false,
      current: undefined,
      pokes: 0,
    };
    this.#workers.set(name, worker);
    // A failed teammate's name may be taken again: the new teammate starts with
    // an empty history, the old one's is kept under agents/removed/.
    let previous: string | undefined;
    try {
      if (existing) {
        existing.runner?.close();
        existing.runner = undefined;
        const archived = await this.#o.histories.archive(name, at);
        const what = existing.retired ? "shut-down" : "failed";
        previous = `replaced the ${what} teammate ${name}${archived ? ` (its history is kept at ${archived})` : ""}`;
      } else if (await this.#o.histories.wasArchived(name)) {
        previous = `a teammate named ${name} was removed earlier; this is a new one with an empty history`;
      }
      // Created after the name is reserved, so of two spawns only the winner makes one;
      // before team.json names it, so a restore never looks for a worktree that is not there.
      if (settings.isolation === "worktree") worker.record = { ...worker.record, worktree: await (await this.#worktrees()).create(name) };
      await this.#persist(name);
      // Held before the task is in the mailbox: a worker looking for free
      // teammates does not take one this runtime means to run itself.
      await this.#takeLease(name);
      await this.#o.store.recover(name);
      await this.#deliver(LEAD, name, "task", prompt, taskId);
    } catch (error) {
      this.#workers.delete(name);
      await this.#persist(name);
      throw error;
    }
    const { pendingTaskId: _sent, ...record } = worker.record;
    worker.record = record;
    await this.#persist(name);
    this.#startWorker(name);
    this.#ensureWatch();
    return { ...worker.record, ...(previous !== undefined ? { previous } : {}) };
  }

  /**
   * Sends `content` from `from` (a trusted identity, never model input) to `to`:
   * the Lead or a teammate that can take messages. Unknown recipients fail
   * before anything is written.
   */
  async send(from: AgentName, to: string, content: string, kind: MessageKind = "message"): Promise<MailboxMessage> {
    this.#refuseWhenClosing("send a message");
    assertAgentName(to);
    if (to === from) throw new TeammateUnavailableError(`${from} cannot send a message to itself`);
    if (to !== LEAD) {
      const worker = this.#workers.get(to);
      if (!worker) throw new UnknownAgentError(to, `known agents: ${[LEAD, ...this.#workers.keys()].join(", ")}`);
      if (worker.record.state === "failed" || worker.record.state === "shutdown") {
        throw new TeammateUnavailableError(`teammate "${to}" is ${worker.record.state} and takes no messages${worker.record.failure ? ` (${worker.record.failure})` : ""}`);
      }
    }
    const message = await this.#deliver(from, to, kind, content);
    if (to !== LEAD) this.#startWorker(to);
    return message;
  }

  /**
   * The Lead asks `name` to shut down: a `shutdown_request` (its own id as the
   * request id) the teammate answers with respond_shutdown when the turn it
   * arrives in ends (after the work queued before it).
   */
  async requestShutdown(name: string, reason: string): Promise<MailboxMessage> {
    this.#refuseWhenClosing("request a shutdown");
    const worker = this.#usable(name);
    // One open request per teammate: it stops at the first one it approves and
    // reads its mailbox no more, so a second one queued behind it would wait
    // for ever, unanswered.
    const open = await this.#openShutdownRequest(worker.record.name);
    if (open) {
      throw new TeammateUnavailableError(`${name} has not answered the shutdown request ${open} yet; wait for its shutdown_response instead of asking again`);
    }
    const id = this.#o.ids.next();
    const message = await this.#deliver(LEAD, worker.record.name, "shutdown_request", reason, id, undefined, id);
    this.#startWorker(worker.record.name);
    return message;
  }

  /** The id of a shutdown request waiting in `name`'s mailbox or being worked on (not answered and acked yet). */
  async #openShutdownRequest(name: AgentName): Promise<string | undefined> {
    const [listing] = await this.#o.store.list({ agent: name });
    const open = listing?.messages.find((entry) => entry.kind === "shutdown_request" && (entry.state === "ready" || entry.state === "processing"));
    return open ? (open.id ?? open.file) : undefined;
  }

  /**
   * A teammate's answer to the shutdown_request it is working on, sent to the
   * Lead at once under an id derived from the request's (a replayed turn's
   * second answer is refused as a duplicate; the first one stands).
   */
  async respondShutdown(name: AgentName, approve: boolean, reason: string): Promise<{ approve: boolean; already: boolean }> {
    const current = this.#workers.get(name)?.current;
    if (current?.kind !== "shutdown_request") {
      throw new TeammateUnavailableError("there is no shutdown request to answer: respond_shutdown answers the Lead's shutdown_request in the turn it arrives in");
    }
    const reply = { inReplyTo: current.id, requestId: requestIdOf(current) };
    const sent = await this.#sendOnce(name, LEAD, "shutdown_response", JSON.stringify({ approve, reason }), reply, derivedId(current.id, "shutdown_response"));
    if (!sent) return { approve: (await this.#shutdownAnswer(name, current)).approve, already: true };
    return { approve, already: false };
  }

  /**
   * A teammate in plan mode submits its plan: a `plan_approval_request` to the
   * Lead (request id derived from the input it works on, so a replayed turn
   * submits the same one), open until the Lead's review_plan.
   */
  async submitPlan(name: AgentName, plan: string): Promise<string> {
    const worker = this.#workers.get(name);
    const current = worker?.current;
    if (!worker || !current || !worker.record.plan || worker.record.plan.state === "approved") {
      throw new TeammateUnavailableError("submit_plan is for a teammate in plan mode whose plan is not approved yet; carry on with your task");
    }
    const requestId = derivedId(current.id, "plan_approval_request");
    const open = worker.record.plan;
    if (open.state === "submitted" && open.requestId !== requestId) {
      throw new TeammateUnavailableError(`your plan (request ${open.requestId}) is waiting for the Lead's review; end your turn and wait for its answer`);
    }
    const content = plan.length > 0 ? plan : "(empty plan)";
    // Recorded before it is sent: a runtime killed in between leaves an open
    // request whose message does not exist, which restore() undoes.
    await this.#setPlan(name, { state: "submitted", requestId });
    await this.#sendOnce(name, LEAD, "plan_approval_request", content, { inReplyTo: current.id, requestId }, requestId);
    return requestId;
  }

  /**
   * The Lead's review of a submitted plan: a `plan_approval_response` to the
   * teammate. Approval lifts it to its normal permission mode from the turn
   * that reads the answer; a rejection keeps it in plan mode with the feedback.
   */
  async reviewPlan(name: string, requestId: string, approve: boolean, feedback: string): Promise<void> {
    this.#refuseWhenClosing("review a plan");
    const worker = this.#usable(name);
    const plan = worker.record.plan;
    if (!plan) throw new TeammateUnavailableError(`teammate "${name}" was not spawned with plan_mode_required and has no plan to review`);
    if (plan.state !== "submitted" || plan.requestId !== requestId) {
      const open = plan.state === "submitted" ? `its open plan request is ${plan.requestId}` : plan.state === "approved" ? "its plan is already approved" : "it has no plan waiting for review";
      throw new TeammateUnavailableError(`request_id ${requestId} is not ${name}'s open plan request: ${open}`);
    }
    const reply = { inReplyTo: requestId, requestId };
    await this.#sendOnce(LEAD, worker.record.name, "plan_approval_response", JSON.stringify({ approve, feedback }), reply, derivedId(requestId, "plan_approval_response"));
    // Also set when the teammate takes the answer up: a runtime killed here still lifts it.
    await this.#setPlan(worker.record.name, { state: approve ? "approved" : "drafting" });
    this.#startWorker(worker.record.name);
  }

  /**
   * A teammate's call that needs approval: a `permission_request` in the Lead's
   * mailbox, answered on the Lead's side (see decidePermission) with a
   * `permission_response` to the teammate. The call waits for the verdict, up
   * to the timeout; a stopped wait is a denial that says why.
   */
  async requestPermission(name: AgentName, request: PermissionRequestContent, signal: AbortSignal): Promise<PermissionResponse> {
    const id = this.#o.ids.next();
    const input = request.input === undefined || JSON.stringify(request.input).length > PERMISSION_INPUT_MAX_CHARS ? {} : { input: request.input };
    const content: PermissionRequestContent = { tool: request.tool, effect: request.effect, subject: request.subject, ...(request.why ? { why: request.why } : {}), ...input };
    const verdict = new Promise<PermissionResponse>((resolve) => this.#permissionWaiters.set(id, resolve));
    const timeoutMs = this.#o.permissionTimeoutMs ?? PERMISSION_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const settled = new AbortController();
    try {
      await this.#deliver(name, LEAD, "permission_request", JSON.stringify(content), id, undefined, id);
      const stopped = new Promise<PermissionResponse>((resolve) => {
        const within = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`;
        timer = setTimeout(() => resolve({ allow: false, reason: `no answer to permission request ${id} within ${within}` }), timeoutMs);
        onAbort = () => resolve({ allow: false, reason: `permission request ${id} was not answered: the run stopped` });
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      // In `agent worker` the Lead's side is another process: its verdict is seen in the store.
      const remote = this.role === "worker" ? this.#verdictInStore(id, settled.signal) : new Promise<never>(() => {});
      return await Promise.race([verdict, stopped, remote]);
    } finally {
      settled.abort();
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
      this.#permissionWaiters.delete(id);
    }
  }

  /** Polls the store for the response to permission request `id` until it is there (or `stop`). */
  async #verdictInStore(id: string, stop: AbortSignal): Promise<PermissionResponse> {
    const responseId = derivedId(id, "permission_response");
    while (!stop.aborted) {
      await Bun.sleep(PERMISSION_POLL_MS);
      const found = await this.#o.store.find(responseId).catch(() => null);
      if (found?.message) return tryProtocolContent(PermissionResponseSchema, found.message) ?? { allow: false, reason: `the answer to permission request ${id} is malformed` };
    }
    return new Promise<never>(() => {});
  }

  /**
   * Moves every ready message of the Lead to processing and publishes it to the
   * Lead's inbox, acknowledged by the mailbox once the Lead has it in history.
   * Runs one pass at a time; a request during a pass makes it go round again.
   */
  async pumpLead(): Promise<void> {
    // A worker's results reach the Lead through the store; its own process takes them in.
    if (this.role === "worker") return;
    if (this.#pumping) {
      this.#pumpAgain = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      do {
        this.#pumpAgain = false;
        for (let message = await this.#o.store.claim(LEAD); message; message = await this.#o.store.claim(LEAD)) {
          this.#emit({ type: "mailbox", op: "claim", agent: LEAD, id: message.id, from: message.sender, kind: message.kind });
          // Answered by the runtime (the user or the Lead's rules), not by a Lead model turn.
          if (message.kind === "permission_request") {
            this.#answerPermission(message);
            continue;
          }
          const claimed = message;
          this.#o.inbox.publish({
            event: eventFromMessage(claimed),
            owner: {
              acknowledge: async () => {
                await this.#o.store.ack(claimed);
                this.#emit({ type: "mailbox", op: "ack", agent: LEAD, id: claimed.id, from: claimed.sender, kind: claimed.kind });
              },
              release: async () => {
                await this.#o.store.release(claimed);
                this.#emit({ type: "mailbox", op: "release", agent: LEAD, id: claimed.id, from: claimed.sender, kind: claimed.kind });
              },
            },
          });
        }
      } while (this.#pumpAgain);
    })().finally(() => {
      this.#pumping = undefined;
    });
    return this.#pumping;
  }

  /**
   * Refuses new spawns and messages, cancels and awaits the workers, releases each
   * message in progress back to ready, closes every runner and marks the
   * teammates shutdown. One failure does not skip the others; what could not be
   * cleaned up is kept so close() can be retried. One error is rethrown as is,
   * several as an AggregateError.
   */
  async close(): Promise<void> {
    this.#closing = true;
    // Its own jobs only: the supervisor and the inbox are shared and closed by
    // the composition root after this.
    await this.#watch?.cancel();
    await Promise.all([...this.#workers.values()].map((worker) => worker.job?.cancel()));
    const errors: unknown[] = [];
    for (const [name, worker] of this.#workers) {
      try {
        if (worker.current) {
          await this.#o.store.release(worker.current);
          this.#emit({ type: "mailbox", op: "release", agent: name, id: worker.current.id, from: worker.current.sender, kind: worker.current.kind });
          worker.current = undefined;
        }
        worker.runner?.close();
        worker.runner = undefined;
        if (worker.record.state !== "failed" && this.#runsHere(name)) await this.#setState(name, "shutdown", undefined, false);
      } catch (error) {
        errors.push(error);
      }
    }
    // Last, and only once everything is cleaned up (a retried close still runs
    // its teammates): their messages are back in ready/ before another process may take them.
    if (errors.length === 0) {
      try {
        await this.#o.hosting?.close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `closing ${errors.length} teammates failed`);
  }

  /**
   * Learns the team as the store has it (from another process): teammates
   * spawned, failed or removed there. Records of teammates run here are this
   * process's to write and are left as they are.
   */
  sync(stored: TeammateRecord[]): void {
    const names = new Set<string>();
    for (const record of stored) {
      names.add(record.name);
      const worker = this.#workers.get(record.name);
      if (worker && this.#runsHere(record.name)) continue;
      // Shut down by the handshake where it ran: so it stays when this process writes it.
      const retired = record.state === "shutdown";
      if (worker) Object.assign(worker, { record, retired });
      else this.#workers.set(record.name, { record, runner: undefined, active: false, current: undefined, pokes: 0, retired });
    }
    for (const [name, worker] of this.#workers) {
      if (!names.has(name) && !this.#runsHere(name) && !worker.active && !worker.record.pendingTaskId) this.#workers.delete(name);
    }
  }

  /** The teammates this process could run and does not: not failed, spawned, not held here. */
  unheld(): AgentName[] {
    return [...this.#workers.values()]
      .filter(({ record }) => record.state !== "failed" && record.state !== "shutdown" && record.pendingTaskId === undefined && !this.#runsHere(record.name))
      .map(({ record }) => record.name);
  }

  /** Teammates held here: their loop looks at their mailbox (messages other processes sent). */
  pokeHeld(): void {
    for (const name of this.#o.hosting?.held() ?? []) this.#startWorker(name);
  }

  /**
   * Takes `name` over when its lease is free (first run here, or its last holder
   * is gone): its interrupted work goes back to ready/ and it starts again from
   * its history in the store. Returns whether this process runs it now.
   */
  async adopt(name: AgentName): Promise<boolean> {
    const worker = this.#workers.get(name);
    if (!worker || this.#closing || this.#runsHere(name) || !this.unheld().includes(name)) return false;
    if (!(await this.#takeLease(name))) return false;
    // A runner from an earlier hold has an old history: build it again from the store.
    worker.runner?.close();
    worker.runner = undefined;
    worker.current = undefined;
    // Whatever its last holder said ("running" when it was killed), it starts here afresh.
    worker.record = { ...worker.record, state: "idle" };
    // Its worktree is this machine's to have: re-added here, or the teammate fails saying why.
    if (worker.record.worktree && !(await this.#restoreWorktree(worker.record))) {
      await this.#persist(name);
      return false;
    }
    await this.#o.store.recover(name);
    this.#startWorker(name);
    return true;
  }

  /**
   * Another process took `name`'s lease (this one did not renew it in time):
   * stop its turn at once and leave its message alone — it is the new holder's.
   */
  leaseLost(name: AgentName, error: Error): void {
    const worker = this.#workers.get(name);
    if (!worker) return;
    this.#emit({ type: "teammate", name, role: worker.record.role, state: worker.record.state, reason: error.message });
    worker.current = undefined;
    void (async () => {
      await worker.job?.cancel();
      worker.current = undefined;
      worker.runner?.close();
      worker.runner = undefined;
      this.#ensureWatch();
      this.#changed();
    })();
  }

  /**
   * Looks at the teammates other processes run: they have work while one says
   * it is running or has messages waiting or in progress. Wakes waiters when
   * that changes. Run before deciding the team is quiet.
   */
  async refreshElsewhere(): Promise<boolean> {
    const elsewhere = [...this.#workers.values()].filter(({ record }) => record.state !== "failed" && record.state !== "shutdown" && !this.#runsHere(record.name));
    let busy = false;
    if (elsewhere.length > 0) {
      const stored = await this.#o.registry.read();
      this.sync(stored);
      busy = stored.some((record) => record.state === "running" && !this.#runsHere(record.name));
      for (const { record } of elsewhere) {
        if (busy) break;
        const [listing] = await this.#o.store.list({ agent: record.name });
        busy = listing !== undefined && listing.counts.ready + listing.counts.processing > 0;
      }
    }
    if (busy !== this.#busyElsewhere) {
      this.#busyElsewhere = busy;
      this.#changed();
    }
    return busy;
  }

  /** Whether the watch has something to look after: a worker always; a Lead while some teammate runs elsewhere. */
  get needsWatch(): boolean {
    return this.role === "worker" || this.unheld().length > 0;
  }

  #ensureWatch(): void {
    if (!this.#o.hosting || this.#watch || this.#closing || !this.needsWatch) return;
    this.#watch = this.#o.supervisor.start("team watch", async (signal) => {
      try {
        await watchTeam(this, { registry: this.#o.registry, hosting: this.#o.hosting!, everyMs: this.#o.watchEveryMs ?? DEFAULT_WATCH_MS }, signal);
      } finally {
        this.#watch = undefined;
      }
    });
  }

  async #takeLease(name: AgentName): Promise<boolean> {
    return !this.#o.hosting || (await this.#o.hosting.take(name));
  }

  /** Whether this process still holds `name`'s lease, asked of the store now (always, without leases). */
  async #stillHeld(name: AgentName): Promise<boolean> {
    return !this.#o.hosting || (await this.#o.hosting.confirm(name));
  }

  #runsHere(name: AgentName): boolean {
    return !this.#o.hosting || this.#o.hosting.holds(name);
  }

  async #deliver(
    from: AgentName,
    to: AgentName,
    kind: MessageKind,
    content: string,
    id?: string,
    inReplyTo?: string,
    requestId?: string,
  ): Promise<MailboxMessage> {
    const ids = id === undefined ? this.#o.ids : { next: () => id };
    const replies = { ...(inReplyTo !== undefined ? { inReplyTo } : {}), ...(requestId !== undefined ? { requestId } : {}) };
    const message = createMessage({ sender: from, recipient: to, kind, content, ...replies }, { clock: this.#o.clock, ids });
    await this.#o.store.send(message);
    this.#emit({ type: "mailbox", op: "send", agent: to, id: message.id, from, kind });
    // Told before the pump below can take it up: a request shows before its answer.
    if (isProtocolKind(kind)) this.#emitProtocol(message);
    if (to === LEAD) await this.pumpLead();
    return message;
  }

  /**
   * Sends the result of `input` to the Lead under an id derived from the input's:
   * if the process dies after this send but before the ack, the replayed input
   * (whose turn the runner has recorded as finished) sends the same id again,
   * which the store refuses as a duplicate — so the Lead gets it once.
   */
  async #deliverResult(name: AgentName, input: MailboxMessage, content: string): Promise<void> {
    const id = derivedId(input.id, "result");
    const message = createMessage(
      { sender: name, recipient: LEAD, kind: "result", content, inReplyTo: input.id, ...(input.taskId !== undefined ? { taskId: input.taskId } : {}) },
      { clock: this.#o.clock, ids: { next: () => id } },
    );
    try {
      await this.#o.store.send(message);
    } catch (error) {
      if (error instanceof DuplicateMessageIdError) return;
      throw error;
    }
    this.#emit({ type: "mailbox", op: "send", agent: LEAD, id, from: name, kind: "result" });
    await this.pumpLead();
  }

  /**
   * Sends a protocol message under a fixed id: a replay (a resumed turn calling
   * the same tool again, a restarted runtime) finds it sent and sends nothing.
   * Returns whether this call sent it.
   */
  async #sendOnce(
    from: AgentName,
    to: AgentName,
    kind: MessageKind,
    content: string,
    reply: { inReplyTo: string; requestId: string },
    id: string,
  ): Promise<boolean> {
    try {
      await this.#deliver(from, to, kind, content, id, reply.inReplyTo, reply.requestId);
      return true;
    } catch (error) {
      if (error instanceof DuplicateMessageIdError) return false;
      throw error;
    }
  }

  /** A teammate that exists and takes messages (not failed, not shut down). */
  #usable(name: string): Worker {
    assertTeammateName(name);
    const worker = this.#workers.get(name);
    if (!worker) throw new UnknownAgentError(name, `teammates: ${[...this.#workers.keys()].join(", ") || "none"}`);
    if (worker.record.state === "failed" || worker.record.state === "shutdown") {
      throw new TeammateUnavailableError(`teammate "${name}" is ${worker.record.state} and takes no messages${worker.record.failure ? ` (${worker.record.failure})` : ""}`);
    }
    return worker;
  }

  /**
   * The teammate's answer to a shutdown request, as sent (the response message
   * is the record of it). A turn that ended without respond_shutdown is a
   * refusal, its final text the reason, so the Lead always gets an answer.
   */
  async #shutdownAnswer(name: AgentName, request: MailboxMessage, finalText?: string): Promise<ShutdownResponse> {
    const id = derivedId(request.id, "shutdown_response");
    const found = await this.#o.store.find(id);
    if (found?.message) return parseProtocolContent(ShutdownResponse, found.message);
    const answer = { approve: false, reason: `${name} ended its turn without answering the shutdown request; it said: ${finalText ?? "(nothing)"}` };
    await this.#sendOnce(name, LEAD, "shutdown_response", JSON.stringify(answer), { inReplyTo: request.id, requestId: requestIdOf(request) }, id);
    return answer;
  }

  /**
   * A teammate shut down by an approved request, found by a new runtime: the
   * request it approved may still be in its mailbox (the last runtime died
   * before the ack), so ack it; anything else stays for `agent team rm`.
   */
  async #settleRetired(name: AgentName): Promise<void> {
    await this.#o.store.recover(name);
    const message = await this.#o.store.claim(name);
    if (!message) return;
    const answered = message.kind === "shutdown_request" && (await this.#o.store.find(derivedId(message.id, "shutdown_response")))?.message;
    if (answered) await this.#o.store.ack(message);
    else await this.#o.store.release(message);
  }

  /**
   * The Lead's side of a permission request, as a job of its own so the pump
   * goes on: the verdict goes to the teammate's mailbox (under an id derived
   * from the request, so a request answered before a crash is not answered
   * twice), then to the waiting call, then the request is acked. A request
   * nobody waits for any more (its runtime died) is denied without asking.
   */
  #answerPermission(message: MailboxMessage): void {
    const requestId = requestIdOf(message);
    this.#o.supervisor.start(`permission request ${requestId}`, async (signal) => {
      const waiter = this.#permissionWaiters.get(requestId);
      let verdict: PermissionResponse;
      // A teammate run here that does not wait any more was stopped with this process;
      // one run by an `agent worker` waits there.
      if (!waiter && this.#runsHere(message.sender)) verdict = { allow: false, reason: `permission request ${requestId} is no longer waited for (its runtime stopped); the call asks again when its turn resumes` };
      else if (!this.#o.decidePermission) verdict = { allow: false, reason: "no one on the Lead's side can answer permission requests in this runtime" };
      else {
        try {
          verdict = await this.#o.decidePermission(parseProtocolContent(PermissionRequestSchema, message), message.sender, requestId, signal);
        } catch (error) {
          verdict = { allow: false, reason: `the permission request could not be decided: ${(error as Error).message}` };
        }
      }
      const teammate = this.#workers.get(message.sender);
      if (teammate) {
        await this.#sendOnce(LEAD, message.sender, "permission_response", JSON.stringify(verdict), { inReplyTo: message.id, requestId }, derivedId(requestId, "permission_response"));
      }
      waiter?.(verdict);
      await this.#o.store.ack(message);
      this.#emit({ type: "mailbox", op: "ack", agent: LEAD, id: message.id, from: message.sender, kind: message.kind });
      // The loop of a teammate that is not busy consumes the response now.
      if (teammate) this.#startWorker(message.sender);
    });
  }

  async #setPlan(name: AgentName, plan: TeammatePlan): Promise<void> {
    const worker = this.#workers.get(name);
    if (!worker) return;
    worker.record = { ...worker.record, plan, updatedAtUtc: this.#o.clock.now().toISOString() };
    await this.#persist(name);
    this.#emit({ type: "teammate", name, role: worker.record.role, state: worker.record.state, plan: plan.state });
    this.#changed();
  }

  #emitProtocol(message: MailboxMessage): void {
    this.#emit({
      type: "protocol",
      kind: message.kind,
      from: message.sender,
      to: message.recipient,
      id: message.id,
      requestId: requestIdOf(message),
      summary: describeProtocol(message),
    });
  }

  async #worktrees(): Promise<GitWorktrees> {
    if (!this.#o.worktrees) throw new WorktreeUnavailableError('isolation "worktree" is not available in this runtime; spawn without isolation');
    return this.#o.worktrees();
  }

  /**
   * A worktree teammate's result ends with its branch and what changed on it:
   * its work is committed to its branch first (its sandbox cannot), so the
   * Lead can merge it. A git failure is reported in the result, not a failure of the teammate.
   */
  async #withWorktreeReport(record: TeammateRecord, result: string): Promise<string> {
    const worktree = record.worktree;
    if (!worktree) return result;
    try {
      const worktrees = await this.#worktrees();
      await worktrees.commitPending(worktree, record.name, `${record.name}: work of its turn`);
      const stat = await worktrees.diffStat(worktree);
      return `${result}\n\n[worktree: branch ${worktree.branch}; changes since it branched:${stat.includes("\n") ? "\n" : " "}${stat}]`;
    } catch (error) {
      return `${result}\n\n[worktree: branch ${worktree.branch}; its changes could not be read: ${(error as Error).message}]`;
    }
  }

  /** Finds a restored teammate's worktree again (re-adding it from its branch when the directory is gone); false, and the teammate failed, when it cannot. */
  async #restoreWorktree(record: TeammateRecord): Promise<boolean> {
    try {
      await (await this.#worktrees()).ensure(record.worktree!);
      return true;
    } catch (error) {
      const worker = this.#workers.get(record.name)!;
      worker.record = { ...worker.record, state: "failed", failure: `its worktree could not be restored: ${(error as Error).message}` };
      return false;
    }
  }

  async #completeTask(name: AgentName, taskId: string): Promise<void> {
    if (!this.#autoClaim) throw new TeammateUnavailableError(`${name} worked task ${taskId} but this runtime has no task graph to complete it in`);
    await this.#autoClaim.complete(name, taskId);
  }

  /** Sends a message built elsewhere (a claim's), reporting it and waking the Lead for one to it. */
  async #sendBuilt(message: MailboxMessage): Promise<void> {
    await this.#o.store.send(message);
    this.#emit({ type: "mailbox", op: "send", agent: message.recipient, id: message.id, from: message.sender, kind: message.kind });
    if (message.recipient === LEAD) await this.pumpLead();
  }

  /** Starts the teammate's loop unless it already runs (or may not). */
  #startWorker(name: AgentName): void {
    const worker = this.#workers.get(name);
    if (!worker) return;
    worker.pokes += 1;
    if (worker.active || this.#closing) return;
    if (worker.record.state === "failed" || worker.record.state === "shutdown") return;
    // Another process runs it (or will, once it sees the message): this one must not.
    if (!this.#runsHere(name)) return;
    worker.active = true;
    worker.job = this.#o.supervisor.start(`teammate ${name}`, (signal) => this.#work(name, worker, signal));
  }

  async #work(name: AgentName, worker: Worker, signal: AbortSignal): Promise<void> {
    try {
      for (;;) {
        if (signal.aborted) return;
        const pokes = worker.pokes;
        const message = await this.#o.store.claim(name);
        if (!message) {
          // A message sent while this claim ran found the loop still active and
          // did not start another: look again before stopping.
          if (worker.pokes !== pokes) continue;
          // Idle with auto-claim: the next task of the graph, if one is free, becomes its next message.
          if (worker.record.autoClaim && this.#autoClaim && (await this.#autoClaim.claimNext(name))) continue;

          await this.#setState(name, "idle");
          // Storing the state may have yielded to a send that found the loop active.
          if (worker.pokes !== pokes) continue;
          return;
        }
        this.#emit({ type: "mailbox", op: "claim", agent: name, id: message.id, from: message.sender, kind: message.kind });
        worker.current = message;
        // Its verdict went to the call that asked, in this process: the message is the record of it, not a turn.
        if (message.kind === "permission_response") {
          if (!(await this.#finish(name, worker, message))) return;
          continue;
        }
        await this.#setState(name, "running");
        // The answer itself decides: the Lead's runtime may have died before it recorded it.
        const plan = worker.record.plan;
        if (message.kind === "plan_approval_response" && plan?.state === "submitted" && plan.requestId === message.requestId) {
          const answer = tryProtocolContent(PlanApprovalResponse, message);
          if (answer) await this.#setPlan(name, { state: answer.approve ? "approved" : "drafting" });
        }
        // Plan approval changes its permission mode from the turn that reads the answer on.
        const inPlanMode = worker.record.plan !== undefined && worker.record.plan.state !== "approved";
        if (worker.runner && worker.runnerInPlanMode !== inPlanMode) {
          worker.runner.close();
          worker.runner = undefined;
        }
        if (!worker.runner) {
          worker.runner = await this.#o.makeRunner(worker.record);
          worker.runnerInPlanMode = inPlanMode;
        }
        // A protocol message reaches the model as the Lead's events do: kind and request id in the envelope.
        const prompt = isProtocolKind(message.kind) ? eventEnvelope(eventFromMessage(message)) : message.content;
        let failure: string | undefined;
        try {
          const result = await worker.runner.run(prompt, { idempotencyKey: message.id, signal });
          // close() releases the message; a turn stopped by the budget resumes in `agent drain`.
          if (result.subtype === "error_interrupted" || result.subtype === "error_budget") return;
          if (result.isError) failure = result.result;
          else if (message.kind === "shutdown_request") {
            // Its answer is the shutdown_response, not a result. Approved: shut
            // down in team.json before the ack (a restore acks a request left behind).
            const answer = await this.#shutdownAnswer(name, message, result.result);
            if (answer.approve) {
              worker.retired = true;
              await this.#setState(name, "shutdown");
              worker.runner?.close();
              worker.runner = undefined;
              await this.#finish(name, worker, message);
              return;
            }
            if (!(await this.#finish(name, worker, message))) return;
          } else {
            // A task it claimed itself: completed before the Lead hears the result (a replay completes it again harmlessly).
            if (message.taskId !== undefined && message.sender === name) await this.#completeTask(name, message.taskId);
            await this.#deliverResult(name, message, await this.#withWorktreeReport(worker.record, result.result));
            // The work is done and its result is with the Lead: from here a
            // storage failure must not fail the teammate or quarantine the input.
            if (!(await this.#finish(name, worker, message))) return;
          }
        } catch (error) {
          if (signal.aborted) return;
          // Taken over by another process (e.g. its history refused this one's
          // append, HISTORY_CONFLICT, before a heartbeat noticed): not a failure of
          // the teammate. Its message is the new holder's, which carries on from history.
          if (!(await this.#stillHeld(name))) return;
          failure = error instanceof Error ? error.message : String(error);
        }
        if (failure !== undefined) {
          await this.#fail(name, worker, message, failure);
          return;
        }
      }
    } finally {
      worker.active = false;
      this.#changed();
    }
  }

  /**
   * Acks a message whose result was delivered, retrying (an ack is idempotent: a
   * retry after one that did land succeeds). If it still fails the message goes
   * back to ready/ — claimed again, its turn replays from history and its result
   * is refused as a duplicate, so the Lead still gets it once — and the loop
   * stops until the next message pokes it. Returns whether the ack landed.
   */
  async #finish(name: AgentName, worker: Worker, message: MailboxMessage): Promise<boolean> {
    const event = { agent: name, id: message.id, from: message.sender, kind: message.kind };
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.#o.store.ack(message);
        this.#emit({ type: "mailbox", op: "ack", ...event });
        worker.current = undefined;
        return true;
      } catch (error) {
        if (attempt >= ACK_ATTEMPTS) break;
        await Bun.sleep(ACK_RETRY_MS * attempt);
      }
    }
    try {
      await this.#o.store.release(message);
      this.#emit({ type: "mailbox", op: "release", ...event });
      worker.current = undefined;
    } catch {
      // Still in processing/ as worker.current: close() releases it, or the next
      // runtime's restore recovers it.
    }
    if (!worker.retired) await this.#setState(name, "idle");
    return false;
  }

  /** A failure is an event, not a log line: input quarantined, state failed, the Lead told. */
  async #fail(name: AgentName, worker: Worker, message: MailboxMessage, reason: string): Promise<void> {
    try {
      await this.#o.store.quarantine(message, `teammate ${name} failed: ${reason}`);
      this.#emit({ type: "mailbox", op: "quarantine", agent: name, id: message.id, from: message.sender, kind: message.kind });
    } finally {
      worker.current = undefined;
      await this.#setState(name, "failed", reason);
      try {
        await this.#deliver(name, LEAD, "result", `teammate ${name} failed on message ${message.id} and stopped: ${reason}`, undefined, message.id);
      } catch {
        // Best effort: the failure is also in team.json and in quarantine/.
      }
    }
  }

  async #setState(name: AgentName, state: TeammateState, failure?: string, persist = true): Promise<void> {
    const worker = this.#workers.get(name);
    if (!worker) return;
    if (worker.record.state === state && failure === undefined) return;
    worker.record = {
      ...worker.record,
      state,
      updatedAtUtc: this.#o.clock.now().toISOString(),
      ...(failure !== undefined ? { failure } : {}),
    };
    if (persist) await this.#persist(name);
    this.#emit({ type: "teammate", name, role: worker.record.role, state, ...(failure !== undefined ? { reason: failure } : {}) });
    this.#changed();
  }

  /** Stores the teammate as it is now (removed when it is gone), one write after another. */
  #persist(name: AgentName): Promise<void> {
    const write = async () => {
      const worker = this.#workers.get(name);
      if (!worker) return this.#o.registry.remove(name);
      // A closed runtime's "shutdown" belongs to this process only: the next one
      // restores the teammate. One that approved a shutdown request stays shut down.
      const { record, retired } = worker;
      return this.#o.registry.put(record.state === "shutdown" && !retired ? { ...record, state: "idle" } : { ...record });
    };
    // Chained, so a later state never lands before an earlier one; each write
    // stores the state current when it runs, so the last one is always the latest.
    const written = this.#writes.then(write);
    this.#writes = written.catch(() => {});
    return written;
  }

  #refuseWhenClosing(what: string): void {
    if (this.#closing) throw new TeammateUnavailableError(`cannot ${what}: the team is shutting down`);
  }

  #changed(): void {
    for (const wake of this.#changeWaiters.splice(0)) wake();
  }

  #emit(event: TeamEvent): void {
    this.#o.observer?.(event);
  }
}
