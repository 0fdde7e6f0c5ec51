import { type AgentName, LEAD, assertAgentName, assertTeammateName } from "../core/agent-name.ts";
import { UnknownAgentError } from "../core/errors.ts";
import type { MailboxMessage, MessageKind } from "../core/message.ts";
import type { PermissionRequestContent, PermissionResponse } from "../protocols/protocol-messages.ts";
import type { EventInbox, MidTurnSource } from "../runtime/event-inbox.ts";
import type { JobSupervisor } from "../runtime/job-supervisor.ts";
import type { Isolation } from "../worktrees/teammate-worktree.ts";
import { AutoClaim } from "./auto-claim.ts";
import { derivedId } from "./derived-id.ts";
import { LeadPump } from "./lead-pump.ts";
import { leadMidTurnMail } from "./mid-turn-mail.ts";
import { PermissionRequests } from "./permission-requests.ts";
import { RemoteTeammates } from "./remote-teammates.ts";
import { inPlanMode, TeamContext, type TeammateRuntimeOptions, type Worker } from "./team-context.ts";
import type { TeamEvent } from "./team-event.ts";
import { TeamMail } from "./team-mail.ts";
import type { TeammateRecord } from "./team-registry.ts";
import { restoreTeam } from "./team-restore.ts";
import type { TeamWatchTarget } from "./team-watch.ts";
import { TeammateUnavailableError } from "./teammate-errors.ts";
import { TeammateLoop } from "./teammate-loop.ts";
import { TeammateProtocols } from "./teammate-protocols.ts";
import { openWorktrees } from "./teammate-worktree-steps.ts";

// Tests, fixtures, tools and the CLI know them from here.
export { derivedId, TeammateUnavailableError };
export type { TeamEvent, TeammateRuntimeOptions };

/**
 * The teammates of one runtime: spawning, messaging, their states, and close.
 * Each teammate's loop (teammate-loop.ts), the protocols (teammate-protocols.ts,
 * permission-requests.ts), the Lead's mailbox feeding the Lead's inbox
 * (lead-pump.ts), restore after a crash (team-restore.ts) and teammates run by
 * other processes (remote-teammates.ts) are parts this class wires together.
 */
export class TeammateRuntime implements TeamWatchTarget {
  readonly #team: TeamContext;
  readonly #mail: TeamMail;
  readonly #permissions: PermissionRequests;
  readonly #pump: LeadPump;
  readonly #protocols: TeammateProtocols;
  readonly #loop: TeammateLoop;
  readonly #remote: RemoteTeammates;

  constructor(options: TeammateRuntimeOptions) {
    this.#team = new TeamContext(options, {
      startWorker: (name) => this.#loop.start(name),
      pumpLead: () => this.#pump.pump(),
    });
    this.#mail = new TeamMail(this.#team);
    this.#permissions = new PermissionRequests(this.#team, this.#mail);
    this.#pump = new LeadPump(this.#team, this.#permissions);
    this.#protocols = new TeammateProtocols(this.#team, this.#mail);
    const autoClaim = options.tasks
      ? new AutoClaim({ tasks: options.tasks, store: options.store, clock: options.clock, send: (message) => this.#mail.sendBuilt(message) })
      : undefined;
    this.#loop = new TeammateLoop(this.#team, this.#mail, this.#protocols, autoClaim);
    this.#remote = new RemoteTeammates(this.#team);
  }

  /**
   * Wakes the idle self-claiming teammates: the task graph changed (a task was
   * created, or completed and so perhaps unblocked others).
   */
  pokeAutoClaimers(): void {
    for (const [name, worker] of this.#team.workers) {
      if (worker.record.autoClaim && !worker.active) this.#loop.start(name);
    }
  }

  get inbox(): EventInbox {
    return this.#team.o.inbox;
  }

  /** A message of the team's store by id (an answer sent to the operator, say), or undefined when there is none. */
  async message(id: string): Promise<MailboxMessage | undefined> {
    return (await this.#team.o.store.find(id))?.message ?? undefined;
  }

  get supervisor(): JobSupervisor {
    return this.#team.o.supervisor;
  }

  /** Every teammate and its state. */
  list(): TeammateRecord[] {
    return [...this.#team.workers.values()].map((worker) => ({ ...worker.record }));
  }

  /** Whether any teammate is working, here or in another process (idle ones are not pending work). */
  hasPendingWork(): boolean {
    return this.#remote.busyElsewhere || [...this.#team.workers.values()].some((worker) => worker.active && !worker.settling);
  }

  /**
   * Resolves once every teammate whose idle notice went out with its result
   * has acknowledged the message that result answers (its loop then knows
   * whether another message keeps it working).
   */
  async acked(): Promise<void> {
    await Promise.all([...this.#team.workers.values()].map((worker) => worker.acking?.catch(() => {})));
  }

  /**
   * Whether a teammate of this process has just sent the Lead a result and is
   * still deciding what follows (its next turn, or going idle with a notice):
   * an event turn waits for it rather than answer the result without the notice.
   */
  finishing(): boolean {
    return [...this.#team.workers.values()].some((worker) => worker.finishing === true);
  }

  get role(): "lead" | "worker" {
    return this.#team.role;
  }

  /** Resolves at the next state change of any teammate. */
  nextChange(signal?: AbortSignal): Promise<void> {
    return this.#team.nextChange(signal);
  }

  /**
   * Restores the team from team.json: every teammate that did not fail gets its
   * runner back (with its history) and its interrupted work recovered; the ones
   * with messages waiting start working. The Lead's processing messages are
   * recovered and fed to its inbox.
   */
  restore(): Promise<void> {
    return restoreTeam(this.#team, { protocols: this.#protocols, remote: this.#remote });
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
    settings: { agent?: string; model?: string; planModeRequired?: boolean; isolation?: Isolation; autoClaim?: boolean; owns?: string[] } = {},
  ): Promise<TeammateRecord & { previous?: string }> {
    const team = this.#team;
    team.refuseWhenClosing("spawn a teammate");
    assertTeammateName(name);
    if (role.trim().length === 0) throw new TeammateUnavailableError("a teammate needs a role, e.g. \"backend\" or \"tester\"");
    if (prompt.length === 0) throw new TeammateUnavailableError("a teammate needs a first task (prompt)");
    const existing = team.workers.get(name);
    if (existing && existing.record.state !== "failed" && !existing.retired) {
      throw new TeammateUnavailableError(`a teammate named "${name}" already exists; pick another name or send_message to it`);
    }
    const at = team.o.clock.now();
    const now = at.toISOString();
    // The first task's id is in team.json before the task is sent: a runtime
    // killed between the two leaves a teammate whose task never went out, which
    // restore() can tell and undo (see team-restore.ts).
    const taskId = team.o.ids.next();
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
        ...(settings.owns && settings.owns.length > 0 ? { owns: settings.owns } : {}),
      },
      runner: undefined,
      active: false,
      current: undefined,
      pokes: 0,
    };
    team.workers.set(name, worker);
    // Until its last write is done, a look at the store (the team watch) reads
    // rows older than this record: they must not replace it (see TeamContext.mayReplace).
    const spawned = team.changing(name);
    try {
      // A failed teammate's name may be taken again: the new teammate starts with
      // an empty history, the old one's is kept under agents/removed/.
      let previous: string | undefined;
      // The task, when it went straight into the teammate's processing/: its loop starts on it.
      let first: MailboxMessage | undefined;
      // Whether the store sent its task with the record that clears it (nothing more to store).
      let sentWithRecord = false;
      try {
        if (existing) {
          existing.runner?.close();
          existing.runner = undefined;
          const archived = await team.o.histories.archive(name, at);
          const what = existing.retired ? "shut-down" : "failed";
          previous = `replaced the ${what} teammate ${name}${archived ? ` (its history is kept at ${archived})` : ""}`;
        } else if (await team.o.histories.wasArchived(name)) {
          previous = `a teammate named ${name} was removed earlier; this is a new one with an empty history`;
        }
        // Created after the name is reserved, so of two spawns only the winner makes one;
        // before team.json names it, so a restore never looks for a worktree that is not there.
        if (settings.isolation === "worktree") worker.record = { ...worker.record, worktree: await (await openWorktrees(team)).create(name) };
        // Three independent steps at once, each done before the task goes out: the
        // teammate named in team.json, its lease held (so a worker looking for
        // free teammates does not take one this runtime means to run itself), its
        // mailbox's directories made.
        // And its runner built, its first model request sent ahead (see #buildAhead).
        await allDone([team.persist(name), team.takeLease(name), team.o.store.prepare?.(name), existing ? undefined : this.#buildAhead(worker, prompt)]);
        // After the lease: what is in processing/ is no other holder's.
        await team.o.store.recover(name);
        const task = await this.#mail.taskGoingWithRecord(name, prompt, taskId);
        if (task) {
          // Another process runs it: its task goes out in the transaction that says so.
          const { pendingTaskId: _sent, ...record } = worker.record;
          worker.record = record;
          await team.persistWithTask(name, task);
          team.emit({ type: "mailbox", op: "send", agent: name, id: task.id, from: LEAD, kind: "task" });
          sentWithRecord = true;
        } else first = await this.#mail.deliverTaskClaimed(name, prompt, taskId);
      } catch (error) {
        team.workers.delete(name);
        // Its model call made ahead is stopped with it.
        worker.runner?.close();
        worker.runner = undefined;
        await team.persist(name);
        throw error;
      }
      const { pendingTaskId: _sent, ...record } = worker.record;
      // Starting on its task here, it is stored running by the same write that
      // says the task went out: its turn waits for one write of team.json, not two.
      worker.record = first ? { ...record, state: "running", updatedAtUtc: team.o.clock.now().toISOString() } : record;
      // The task is durable in its mailbox: the teammate starts on it while
      // team.json is told it went out (a restore finds it sent either way).
      const stored = sentWithRecord ? team.stored(name) : team.persist(name);
      if (first) {
        void stored.then(
          () => {
            team.emit({ type: "teammate", name, role: worker.record.role, state: "running" });
            team.changed();
          },
          () => {},
        );
      }
      this.#loop.start(name, first);
      // Another process runs it (its lease was not ours to take): no turn here takes the call made ahead.
      if (!team.runsHere(name) && worker.runner && !worker.active) {
        worker.runner.close();
        worker.runner = undefined;
      }
      await stored;
      this.#remote.ensureWatch();
      return { ...worker.record, ...(previous !== undefined ? { previous } : {}) };
    } finally {
      spawned();
    }
  }

  /**
   * Builds a new teammate's runner while its spawn's writes are made, and sends
   * its first model request ahead (AgentRunner.sendAhead): the model works
   * while the disk does, and the turn, which starts once the task is durable,
   * takes the answer. Only for a task that goes to the teammate as it is (not
   * moved to an attachment). Best effort: a runner that cannot be built now is
   * built by the loop, which reports why it fails, as before.
   */
  async #buildAhead(worker: Worker, prompt: string): Promise<void> {
    // Only for a teammate this process will run: one an `agent worker` takes has a runner of its
    // own there, and a call made here would be one no turn takes. (A new name's lease is this
    // process's to take unless it runs no teammates or is full; should the take fail all the
    // same, the spawn closes this runner and the call with it.)
    if (!this.#mail.goesAsIs("task", prompt) || !this.#team.mayRunHere(worker.record.name)) return;
    try {
      // The spawn awaits this before it goes on or fails: a failed one closes the runner, stopping the call.
      const runner = await this.#team.o.makeRunner(worker.record);
      worker.runner = runner;
      worker.runnerInPlanMode = inPlanMode(worker.record);
      runner.sendAhead(prompt);
    } catch {
      // The loop builds it again.
    }
  }

  /**
   * Sends `content` from `from` (a trusted identity, never model input) to `to`:
   * the Lead or a teammate that can take messages. Unknown recipients fail
   * before anything is written.
   */
  async send(from: AgentName, to: string, content: string, kind: MessageKind = "message"): Promise<MailboxMessage> {
    const team = this.#team;
    team.refuseWhenClosing("send a message");
    assertAgentName(to);
    if (to === from) throw new TeammateUnavailableError(`${from} cannot send a message to itself`);
    if (to !== LEAD) {
      const worker = team.workers.get(to);
      if (!worker) throw new UnknownAgentError(to, `known agents: ${[LEAD, ...team.workers.keys()].join(", ")}`);
      if (worker.record.state === "failed" || worker.record.state === "shutdown") {
        throw new TeammateUnavailableError(`teammate "${to}" is ${worker.record.state} and takes no messages${worker.record.failure ? ` (${worker.record.failure})` : ""}`);
      }
    }
    const message = await this.#mail.deliver(from, to, kind, content);
    if (to !== LEAD) this.#loop.start(to);
    return message;
  }

  /** See TeammateProtocols.requestShutdown. */
  requestShutdown(name: string, reason: string): Promise<MailboxMessage> {
    return this.#protocols.requestShutdown(name, reason);
  }

  /** See TeammateProtocols.respondShutdown. */
  respondShutdown(name: AgentName, approve: boolean, reason: string): Promise<{ approve: boolean; already: boolean }> {
    return this.#protocols.respondShutdown(name, approve, reason);
  }

  /** See TeammateProtocols.submitPlan. */
  submitPlan(name: AgentName, plan: string): Promise<string> {
    return this.#protocols.submitPlan(name, plan);
  }

  /** See TeammateProtocols.reviewPlan. */
  reviewPlan(name: string, requestId: string, approve: boolean, feedback: string): Promise<void> {
    return this.#protocols.reviewPlan(name, requestId, approve, feedback);
  }

  /** See PermissionRequests.request. */
  requestPermission(name: AgentName, request: PermissionRequestContent, signal: AbortSignal): Promise<PermissionResponse> {
    return this.#permissions.request(name, request, signal);
  }

  /** See LeadPump.pump. */
  pumpLead(): Promise<void> {
    return this.#pump.pump();
  }

  /** Where the Lead's turns look between steps for the operator's word (see leadMidTurnMail). */
  leadMidTurn(): MidTurnSource {
    return leadMidTurnMail(this.#team);
  }

  /**
   * Refuses new spawns and messages, cancels and awaits the workers, releases each
   * message in progress back to ready, closes every runner and marks the
   * teammates shutdown. One failure does not skip the others; what could not be
   * cleaned up is kept so close() can be retried. One error is rethrown as is,
   * several as an AggregateError.
   */
  async close(): Promise<void> {
    const team = this.#team;
    team.closing = true;
    // Its own jobs only: the supervisor and the inbox are shared and closed by
    // the composition root after this.
    await this.#remote.stopWatch();
    // Asked of the store now, before any turn is stopped: a process stalled past its
    // lease (SIGSTOP, a long pause) has not heard yet that another took the teammate
    // over. Told now, it neither writes that teammate's history (see guardWrites)
    // nor gives back its message, which are the new holder's.
    for (const [name, worker] of team.workers) if ((worker.active || worker.current) && team.runsHere(name)) await team.stillHeld(name);
    await Promise.all([...team.workers.values()].map((worker) => worker.job?.cancel()));
    const errors: unknown[] = [];
    for (const [name, worker] of team.workers) {
      try {
        // Taken over (found above): the message is the new holder's — recovered,
        // perhaps finished — not ours to give back.
        if (worker.current && !team.runsHere(name)) worker.current = undefined;
        if (worker.current) {
          try {
            await team.o.store.release(worker.current);
            team.emit({ type: "mailbox", op: "release", agent: name, id: worker.current.id, from: worker.current.sender, kind: worker.current.kind });
          } catch (error) {
            // Taken over between the look above and the release (a stall can outlast
            // the lease at any moment, and the new holder recovers the message at
            // once): the message is the new holder's, and its shutdown no failure.
            if (!team.o.hosting || (await team.stillHeld(name))) throw error;
          }
          worker.current = undefined;
        }
        worker.runner?.close();
        worker.runner = undefined;
        if (worker.record.state !== "failed" && team.runsHere(name)) await team.setState(name, "shutdown", undefined, false);
      } catch (error) {
        errors.push(error);
      }
    }
    // Last, and only once everything is cleaned up (a retried close still runs
    // its teammates): their messages are back in ready/ before another process may take them.
    if (errors.length === 0) {
      try {
        await team.o.hosting?.close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `closing ${errors.length} teammates failed`);
  }

  /** See RemoteTeammates.changeMark. */
  changeMark(): number {
    return this.#remote.changeMark();
  }

  /** See RemoteTeammates.sync. */
  sync(stored: TeammateRecord[], mark: number): void {
    this.#remote.sync(stored, mark);
  }

  /** See RemoteTeammates.unheld. */
  unheld(): AgentName[] {
    return this.#remote.unheld();
  }

  /** See RemoteTeammates.pokeHeld. */
  pokeHeld(only?: string): void {
    this.#remote.pokeHeld(only);
  }

  /** See RemoteTeammates.adopt. */
  adopt(name: AgentName): Promise<boolean> {
    return this.#remote.adopt(name);
  }

  /** Whether this process runs `name` now (holds its lease, or shares teammates with no one). */
  runsHere(name: AgentName): boolean {
    return this.#team.runsHere(name);
  }

  /** See RemoteTeammates.leaseLost. */
  leaseLost(name: AgentName, error: Error): void {
    this.#remote.leaseLost(name, error);
  }

  /** See RemoteTeammates.refreshElsewhere. */
  refreshElsewhere(): Promise<boolean> {
    return this.#remote.refreshElsewhere();
  }

  /** Whether the watch has something to look after: a worker always; a Lead while some teammate runs elsewhere. */
  get needsWatch(): boolean {
    return this.#remote.needsWatch;
  }
}

/**
 * Waits for every step, then throws the first failure: a step still under way
 * when another fails (a lease being taken) is not left running behind the
 * caller's undo.
 */
async function allDone(steps: (Promise<unknown> | undefined)[]): Promise<void> {
  const settled = await Promise.allSettled(steps);
  const failed = settled.find((step) => step.status === "rejected");
  if (failed) throw failed.reason;
}
