import { spillToAttachment } from "../attachments/attachment-text.ts";
import { type AgentName, LEAD, USER } from "../core/agent-name.ts";
import { DuplicateMessageIdError } from "../core/errors.ts";
import { createMessage, type MailboxMessage, type MessageKind } from "../core/message.ts";
import { describeProtocol, isProtocolKind, requestIdOf } from "../protocols/protocol-messages.ts";
import { derivedId } from "./derived-id.ts";
import type { TeamContext } from "./team-context.ts";

/**
 * How the team's messages go out: into the store, reported as events, and —
 * for one to the Lead — fed to the Lead's inbox at once. Ids derived from an
 * input make a replayed send a refused duplicate, so nothing arrives twice.
 */
export class TeamMail {
  readonly #team: TeamContext;

  constructor(team: TeamContext) {
    this.#team = team;
  }

  async deliver(
    from: AgentName,
    to: AgentName,
    kind: MessageKind,
    content: string,
    id?: string,
    inReplyTo?: string,
    requestId?: string,
  ): Promise<MailboxMessage> {
    const team = this.#team;
    const ids = id === undefined ? team.o.ids : { next: () => id };
    const replies = { ...(inReplyTo !== undefined ? { inReplyTo } : {}), ...(requestId !== undefined ? { requestId } : {}) };
    const message = createMessage({ sender: from, recipient: to, kind, content: await this.#fitted(kind, content), ...replies }, { clock: team.o.clock, ids });
    await team.o.store.send(message);
    team.emit({ type: "mailbox", op: "send", agent: to, id: message.id, from, kind });
    // Told before the pump below can take it up: a request shows before its answer.
    if (isProtocolKind(kind)) this.#emitProtocol(message);
    if (to === LEAD) await team.pumpLead();
    return message;
  }

  /**
   * A spawn's first task for a teammate another process will run, built but not
   * sent: the registry sends it with the record that says it went out
   * (TeamRegistry.changeWithTask). Undefined where the registry cannot.
   */
  async taskGoingWithRecord(to: AgentName, content: string, id: string): Promise<MailboxMessage | undefined> {
    const team = this.#team;
    if (!team.o.registry.changeWithTask || team.runsHere(to)) return undefined;
    return createMessage({ sender: LEAD, recipient: to, kind: "task", content: await this.#fitted("task", content) }, { clock: team.o.clock, ids: { next: () => id } });
  }

  /**
   * A task for a teammate this process runs and starts at once: sent straight
   * into its `processing/` where the store can (`sendClaimed`), so its loop takes
   * it without a claim. Returns the message then; undefined when it was sent as
   * any other (the loop claims it).
   */
  async deliverTaskClaimed(to: AgentName, content: string, id: string): Promise<MailboxMessage | undefined> {
    const team = this.#team;
    const store = team.o.store;
    if (!store.sendClaimed || !team.runsHere(to)) {
      await this.deliver(LEAD, to, "task", content, id);
      return undefined;
    }
    const message = createMessage({ sender: LEAD, recipient: to, kind: "task", content: await this.#fitted("task", content) }, { clock: team.o.clock, ids: { next: () => id } });
    await store.sendClaimed(message);
    team.emit({ type: "mailbox", op: "send", agent: to, id: message.id, from: LEAD, kind: "task" });
    return message;
  }

  /**
   * Sends the result of `input` to whoever should hear it (replyTarget) under an
   * id derived from the input's: if the process dies after this send but before
   * the ack, the replayed input (whose turn the runner has recorded as finished)
   * sends the same id again, which the store refuses as a duplicate — so the
   * answer arrives once. With `wakeLead` false a result to the Lead stays in its
   * mailbox until the caller pumps it (with the idle notice that may follow).
   * Returns who it went to.
   */
  async deliverResult(name: AgentName, input: MailboxMessage, content: string, wakeLead = true): Promise<AgentName> {
    const team = this.#team;
    const to = replyTarget(name, input);
    const message = await this.#result(name, to, input, content);
    const id = message.id;
    try {
      await team.o.store.send(message);
    } catch (error) {
      if (error instanceof DuplicateMessageIdError) return to;
      throw error;
    }
    team.emit({ type: "mailbox", op: "send", agent: to, id, from: name, kind: "result" });
    if (to === LEAD) {
      if (wakeLead) await team.pumpLead();
    }
    // A peer's loop takes it up (or its own process does, woken by the store); the operator reads it with `team send --wait`.
    else if (to !== USER) team.startWorker(to);
    return to;
  }

  /**
   * deliverResult to the Lead with the teammate's idle notice behind it, for a
   * teammate with nothing more queued. Where the store makes sends in call
   * order (group commit) both are started at once, the result first: one take
   * of the store and one fsync of the Lead's ready/ for the two, and the notice
   * never lands ahead of the result (should the result alone fail, the notice
   * is out and the Lead hears of the failure after it). Elsewhere the notice is
   * sent once the result is. Neither wakes the Lead: the caller feeds both at
   * once. A replay finds each sent already (their ids are derived from the
   * input's) and sends nothing twice.
   */
  async deliverResultWithIdle(name: AgentName, input: MailboxMessage, content: string): Promise<void> {
    const team = this.#team;
    const result = await this.#result(name, LEAD, input, content);
    // Stamped after the result: made in the same millisecond, the notice would be
    // ordered by its id (FIFO is time, then id) and could come first.
    const after = { now: () => new Date(Math.max(team.o.clock.now().getTime(), Date.parse(result.createdAtUtc) + 1)) };
    const idle = createMessage(
      { sender: name, recipient: LEAD, kind: "idle", content: idleNotice(name), inReplyTo: input.id },
      { clock: after, ids: { next: () => derivedId(input.id, "idle") } },
    );
    const store = team.o.store;
    let sent: PromiseSettledResult<void>[];
    if (store.sendsInCallOrder) sent = await Promise.allSettled([store.send(result), store.send(idle)]);
    else {
      const first = await settled(store.send(result));
      sent = [first, ...(first.status === "fulfilled" || first.reason instanceof DuplicateMessageIdError ? [await settled(store.send(idle))] : [])];
    }
    for (const [i, outcome] of sent.entries()) {
      const message = i === 0 ? result : idle;
      if (outcome.status === "fulfilled") team.emit({ type: "mailbox", op: "send", agent: LEAD, id: message.id, from: name, kind: message.kind });
      else if (!(outcome.reason instanceof DuplicateMessageIdError)) throw outcome.reason;
    }
  }

  /** The result of `input` for `to`, under the id derived from the input's. */
  async #result(name: AgentName, to: AgentName, input: MailboxMessage, content: string): Promise<MailboxMessage> {
    return createMessage(
      { sender: name, recipient: to, kind: "result", content: await this.#fitted("result", content), inReplyTo: input.id, ...(input.taskId !== undefined ? { taskId: input.taskId } : {}) },
      { clock: this.#team.o.clock, ids: { next: () => derivedId(input.id, "result") } },
    );
  }

  /**
   * The answers owed to the messages that joined `input`'s turn mid-turn: the
   * turn's result goes to each whose reply target is not `input`'s (that one
   * has it), under the id derived from its own — so a replay sends none twice
   * and `agent team send --wait` finds its answer. A message pruned since has
   * nobody waiting for it.
   */
  async deliverJoinedResults(name: AgentName, input: MailboxMessage, joined: readonly string[], content: string): Promise<void> {
    const target = replyTarget(name, input);
    for (const id of joined) {
      const message = (await this.#team.o.store.find(id))?.message;
      if (!message || message.recipient !== name || replyTarget(name, message) === target) continue;
      await this.deliverResult(name, message, content);
    }
  }

  /**
   * Sends a protocol message under a fixed id: a replay (a resumed turn calling
   * the same tool again, a restarted runtime) finds it sent and sends nothing.
   * Returns whether this call sent it.
   */
  async sendOnce(
    from: AgentName,
    to: AgentName,
    kind: MessageKind,
    content: string,
    reply: { inReplyTo: string; requestId: string },
    id: string,
  ): Promise<boolean> {
    try {
      await this.deliver(from, to, kind, content, id, reply.inReplyTo, reply.requestId);
      return true;
    } catch (error) {
      if (error instanceof DuplicateMessageIdError) return false;
      throw error;
    }
  }

  /** Sends a message built elsewhere (a claim's), reporting it and waking the Lead for one to it. */
  async sendBuilt(built: MailboxMessage): Promise<void> {
    const team = this.#team;
    const content = await this.#fitted(built.kind, built.content);
    const message = content === built.content ? built : { ...built, content };
    await team.o.store.send(message);
    team.emit({ type: "mailbox", op: "send", agent: message.recipient, id: message.id, from: message.sender, kind: message.kind });
    if (message.recipient === LEAD) await team.pumpLead();
  }

  /**
   * `content` as a message can carry it: over the store's cap, it is stored as
   * an attachment first (durably: a crash between the two leaves an attachment
   * no message names, never a message naming nothing) and the message carries
   * its first part and the attachment's id. The same content is the same
   * attachment, so a replayed send builds the same message again. A protocol
   * message's content is JSON its recipient parses: never cut.
   */
  /** Whether `content` is sent as it is (not moved to an attachment for being too large). */
  goesAsIs(kind: MessageKind, content: string): boolean {
    const { store, attachments } = this.#team.o;
    return !attachments || isProtocolKind(kind) || Buffer.byteLength(content, "utf8") <= store.maxContentBytes;
  }

  async #fitted(kind: MessageKind, content: string): Promise<string> {
    const { store, attachments } = this.#team.o;
    if (!attachments || this.goesAsIs(kind, content)) return content;
    return spillToAttachment(content, store.maxContentBytes, attachments);
  }

  #emitProtocol(message: MailboxMessage): void {
    this.#team.emit({
      type: "protocol",
      kind: message.kind,
      from: message.sender,
      to: message.recipient,
      id: message.id,
      requestId: requestIdOf(message),
      summary: describeProtocol(message),
    });
  }
}

/**
 * Where a teammate's answer to `input` goes: a message (kind `message`) from a
 * peer or the operator is answered to its sender, as a person expects of a
 * question; a task's result goes to the Lead that tracks the work (a task it
 * claimed itself names itself as sender), and so does the answer to a result —
 * answering a result to its sender would start two teammates replying to each
 * other for ever.
 */
export function replyTarget(name: AgentName, input: MailboxMessage): AgentName {
  return input.kind === "message" && input.sender !== name ? input.sender : LEAD;
}

/** What a teammate's idle notice to the Lead says. */
export function idleNotice(name: AgentName): string {
  return `${name} is idle`;
}

/** A promise's outcome, as Promise.allSettled gives each. */
async function settled(promise: Promise<void>): Promise<PromiseSettledResult<void>> {
  try {
    await promise;
    return { status: "fulfilled", value: undefined };
  } catch (reason) {
    return { status: "rejected", reason };
  }
}
