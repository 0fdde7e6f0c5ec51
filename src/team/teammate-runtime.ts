import { type AgentName, LEAD, assertAgentName, assertTeammateName } from "../core/agent-name.ts";
import type { Clock } from "../core/clock.ts";
import { AgentError, DuplicateMessageIdError, UnknownAgentError } from "../core/errors.ts";
import { type IdSource, isTimeKeyedId } from "../core/ids.ts";
import { createMessage, type MailboxMessage, type MessageKind } from "../core/message.ts";
import { eventFromMessage } from "../core/runtime-event.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import type { EventInbox } from "../runtime/event-inbox.ts";
import type { JobHandle, JobSupervisor } from "../runtime/job-supervisor.ts";
import type { TeamRegistry, TeammateRecord, TeammateState } from "./team-registry.ts";
import { archiveHistory, wasRemoved } from "./teammate-archive.ts";

const ACK_ATTEMPTS = 3;
const ACK_RETRY_MS = 50;

export class TeammateUnavailableError extends AgentError {
  readonly code = "TEAMMATE_UNAVAILABLE";
  readonly category = "usage" as const;
}

/** What the team reports as it works, for progress and `stream-json`. */
export type TeamEvent =
  | { type: "teammate"; name: string; role: string; state: TeammateState; reason?: string }
  | { type: "mailbox"; op: "send" | "claim" | "ack" | "release" | "quarantine"; agent: string; id: string; from: string; kind: MessageKind };

export interface TeammateRuntimeOptions {
  store: MailboxStore;
  /** The Lead's event inbox: messages to `lead` are published here. */
  inbox: EventInbox;
  supervisor: JobSupervisor;
  registry: TeamRegistry;
  /** Builds (or rebuilds, on restore) the runner of a teammate, with its own history. */
  makeRunner: (teammate: TeammateRecord) => AgentRunner;
  clock: Clock;
  ids: IdSource;
  observer?: (event: TeamEvent) => void;
}

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
}

/**
 * The teammates of one runtime: spawning, messaging, each teammate's worker loop
 * (claim → run with the message id as idempotency key → result to the Lead →
 * ack), their states, the Lead's mailbox feeding the Lead's inbox, and close.
 */
export class TeammateRuntime {
  readonly #o: TeammateRuntimeOptions;
  readonly #workers = new Map<AgentName, Worker>();
  readonly #changeWaiters: (() => void)[] = [];
  #closing = false;
  #pumping: Promise<void> | undefined;
  #pumpAgain = false;

  constructor(options: TeammateRuntimeOptions) {
    this.#o = options;
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

  /** Whether any teammate is working (idle ones are not pending work). */
  hasPendingWork(): boolean {
    return [...this.#workers.values()].some((worker) => worker.active);
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
    const stored = this.#o.registry.read();
    const records: TeammateRecord[] = [];
    for (const { pendingTaskId, ...record } of stored) {
      // A spawn killed before its first task went out: undo it, so the Lead's
      // resumed turn (told its spawn call did not finish) can spawn the name again.
      if (pendingTaskId !== undefined && !(await this.#o.store.find(pendingTaskId))) continue;
      records.push(record);
    }
    for (const record of records) {
      const state: TeammateState = record.state === "failed" ? "failed" : "idle";
      this.#workers.set(record.name, { record: { ...record, state }, runner: undefined, active: false, current: undefined, pokes: 0 });
      if (state !== "failed") {
        await this.#o.store.recover(record.name);
        this.#startWorker(record.name);
      }
    }
    // A teammate a killed runtime left "running" with no work to pick up again
    // never changes state here: without this write team.json would keep saying
    // "running" after this runtime has finished.
    if (records.length !== stored.length || stored.some((record) => record.state === "running" || record.pendingTaskId)) {
      this.#persist();
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
    settings: { agent?: string; model?: string } = {},
  ): Promise<TeammateRecord & { previous?: string }> {
    this.#refuseWhenClosing("spawn a teammate");
    assertTeammateName(name);
    if (role.trim().length === 0) throw new TeammateUnavailableError("a teammate needs a role, e.g. \"backend\" or \"tester\"");
    if (prompt.length === 0) throw new TeammateUnavailableError("a teammate needs a first task (prompt)");
    const existing = this.#workers.get(name);
    if (existing && existing.record.state !== "failed") {
      throw new TeammateUnavailableError(`a teammate named "${name}" already exists; pick another name or send_message to it`);
    }
    const at = this.#o.clock.now();
    const now = at.toISOString();
    // A failed teammate's name may be taken again: the new teammate starts with
    // an empty history, the old one's is kept under agents/removed/.
    let previous: string | undefined;
    if (existing) {
      existing.runner?.close();
      existing.runner = undefined;
      const archived = archiveHistory(this.#o.registry.stateDir, name, at);
      previous = `replaced the failed teammate ${name}${archived ? ` (its history is kept at ${archived})` : ""}`;
    } else if (wasRemoved(this.#o.registry.stateDir, name)) {
      previous = `a teammate named ${name} was removed earlier; this is a new one with an empty history`;
    }
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
      },
      runner: undefined,
      active: false,
      current: undefined,
      pokes: 0,
    };
    this.#workers.set(name, worker);
    try {
      this.#persist();
      await this.#o.store.recover(name);
      await this.#deliver(LEAD, name, "task", prompt, taskId);
    } catch (error) {
      this.#workers.delete(name);
      this.#persist();
      throw error;
    }
    const { pendingTaskId: _sent, ...record } = worker.record;
    worker.record = record;
    this.#persist();
    this.#startWorker(name);
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
   * Moves every ready message of the Lead to processing and publishes it to the
   * Lead's inbox, acknowledged by the mailbox once the Lead has it in history.
   * Runs one pass at a time; a request during a pass makes it go round again.
   */
  async pumpLead(): Promise<void> {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      do {
        this.#pumpAgain = false;
        for (let message = await this.#o.store.claim(LEAD); message; message = await this.#o.store.claim(LEAD)) {
          this.#emit({ type: "mailbox", op: "claim", agent: LEAD, id: message.id, from: message.sender, kind: message.kind });
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
        if (worker.record.state !== "failed") this.#setState(name, "shutdown", undefined, false);
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `closing ${errors.length} teammates failed`);
  }

  async #deliver(
    from: AgentName,
    to: AgentName,
    kind: MessageKind,
    content: string,
    id?: string,
    inReplyTo?: string,
  ): Promise<MailboxMessage> {
    const ids = id === undefined ? this.#o.ids : { next: () => id };
    const message = createMessage({ sender: from, recipient: to, kind, content, ...(inReplyTo !== undefined ? { inReplyTo } : {}) }, { clock: this.#o.clock, ids });
    await this.#o.store.send(message);
    this.#emit({ type: "mailbox", op: "send", agent: to, id: message.id, from, kind });
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
      { sender: name, recipient: LEAD, kind: "result", content, inReplyTo: input.id },
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

  /** Starts the teammate's loop unless it already runs (or may not). */
  #startWorker(name: AgentName): void {
    const worker = this.#workers.get(name);
    if (!worker) return;
    worker.pokes += 1;
    if (worker.active || this.#closing) return;
    if (worker.record.state === "failed" || worker.record.state === "shutdown") return;
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
          this.#setState(name, "idle");
          return;
        }
        this.#emit({ type: "mailbox", op: "claim", agent: name, id: message.id, from: message.sender, kind: message.kind });
        worker.current = message;
        this.#setState(name, "running");
        worker.runner ??= this.#o.makeRunner(worker.record);
        let failure: string | undefined;
        try {
          const result = await worker.runner.run(message.content, { idempotencyKey: message.id, signal });
          // close() releases the message; a turn stopped by the budget resumes in `agent drain`.
          if (result.subtype === "error_interrupted" || result.subtype === "error_budget") return;
          if (result.isError) failure = result.result;
          else {
            await this.#deliverResult(name, message, result.result);
            // The work is done and its result is with the Lead: from here a
            // storage failure must not fail the teammate or quarantine the input.
            if (!(await this.#finish(name, worker, message))) return;
          }
        } catch (error) {
          if (signal.aborted) return;
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
    this.#setState(name, "idle");
    return false;
  }

  /** A failure is an event, not a log line: input quarantined, state failed, the Lead told. */
  async #fail(name: AgentName, worker: Worker, message: MailboxMessage, reason: string): Promise<void> {
    try {
      await this.#o.store.quarantine(message, `teammate ${name} failed: ${reason}`);
      this.#emit({ type: "mailbox", op: "quarantine", agent: name, id: message.id, from: message.sender, kind: message.kind });
    } finally {
      worker.current = undefined;
      this.#setState(name, "failed", reason);
      try {
        await this.#deliver(name, LEAD, "result", `teammate ${name} failed on message ${message.id} and stopped: ${reason}`, undefined, message.id);
      } catch {
        // Best effort: the failure is also in team.json and in quarantine/.
      }
    }
  }

  #setState(name: AgentName, state: TeammateState, failure?: string, persist = true): void {
    const worker = this.#workers.get(name);
    if (!worker) return;
    if (worker.record.state === state && failure === undefined) return;
    worker.record = {
      ...worker.record,
      state,
      updatedAtUtc: this.#o.clock.now().toISOString(),
      ...(failure !== undefined ? { failure } : {}),
    };
    if (persist) this.#persist();
    this.#emit({ type: "teammate", name, role: worker.record.role, state, ...(failure !== undefined ? { reason: failure } : {}) });
    this.#changed();
  }

  #persist(): void {
    // "shutdown" belongs to this process only: the next one restores the teammate.
    this.#o.registry.write(this.list().map((record) => (record.state === "shutdown" ? { ...record, state: "idle" } : record)));
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

/**
 * A UUID (version 8, name-based) derived from `id` and `purpose`: the same inputs
 * always give the same id. It carries no time — a replay must derive the very same
 * id, whenever it runs — so it must never look time-keyed (see timeKeyedId).
 */
export function derivedId(id: string, purpose: string): string {
  const bytes = new Bun.CryptoHasher("sha256").update(`${purpose}:${id}`).digest();
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.subarray(0, 16).toString("hex");
  const derived = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  // One in 4096 hashes would carry the time-key mark: flip a bit of it.
  return isTimeKeyedId(derived) ? `${derived.slice(0, 17)}${derived[17] === "0" ? "1" : "0"}${derived.slice(18)}` : derived;
}
