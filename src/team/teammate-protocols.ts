import { type AgentName, LEAD } from "../core/agent-name.ts";
import type { MailboxMessage } from "../core/message.ts";
import { ShutdownResponse, isProtocolKind, parseProtocolContent, requestIdOf } from "../protocols/protocol-messages.ts";
import { DuplicateMessageIdError } from "../core/errors.ts";
import { derivedId } from "./derived-id.ts";
import type { TeamContext } from "./team-context.ts";
import type { TeamMail } from "./team-mail.ts";
import { TeammateUnavailableError } from "./teammate-errors.ts";

/**
 * The shutdown handshake and plan approval between the Lead and a teammate.
 * Every answer goes out under an id derived from what it answers, so a replayed
 * turn or a restarted runtime never answers twice.
 */
export class TeammateProtocols {
  readonly #team: TeamContext;
  readonly #mail: TeamMail;

  constructor(team: TeamContext, mail: TeamMail) {
    this.#team = team;
    this.#mail = mail;
  }

  /**
   * The Lead asks `name` to shut down: a `shutdown_request` (its own id as the
   * request id) the teammate answers with respond_shutdown when the turn it
   * arrives in ends (after the work queued before it).
   */
  async requestShutdown(name: string, reason: string): Promise<MailboxMessage> {
    const team = this.#team;
    team.refuseWhenClosing("request a shutdown");
    const worker = team.usable(name);
    // One open request per teammate: it stops at the first one it approves and
    // reads its mailbox no more, so a second one queued behind it would wait
    // for ever, unanswered.
    const open = await this.#openShutdownRequest(worker.record.name);
    if (open) {
      throw new TeammateUnavailableError(`${name} has not answered the shutdown request ${open} yet; wait for its shutdown_response instead of asking again`);
    }
    const id = team.o.ids.next();
    const message = await this.#mail.deliver(LEAD, worker.record.name, "shutdown_request", reason, id, undefined, id);
    team.startWorker(worker.record.name);
    return message;
  }

  /** The id of a shutdown request waiting in `name`'s mailbox or being worked on (not answered and acked yet). */
  async #openShutdownRequest(name: AgentName): Promise<string | undefined> {
    const [listing] = await this.#team.o.store.list({ agent: name });
    const open = listing?.messages.find((entry) => entry.kind === "shutdown_request" && (entry.state === "ready" || entry.state === "processing"));
    return open ? (open.id ?? open.file) : undefined;
  }

  /**
   * A teammate's answer to the shutdown_request it is working on, sent to the
   * Lead at once under an id derived from the request's (a replayed turn's
   * second answer is refused as a duplicate; the first one stands).
   */
  async respondShutdown(name: AgentName, approve: boolean, reason: string): Promise<{ approve: boolean; already: boolean }> {
    const current = this.#team.workers.get(name)?.current;
    if (current?.kind !== "shutdown_request") {
      throw new TeammateUnavailableError("there is no shutdown request to answer: respond_shutdown answers the Lead's shutdown_request in the turn it arrives in");
    }
    const reply = { inReplyTo: current.id, requestId: requestIdOf(current) };
    const sent = await this.#mail.sendOnce(name, LEAD, "shutdown_response", JSON.stringify({ approve, reason }), reply, derivedId(current.id, "shutdown_response"));
    if (!sent) return { approve: (await this.shutdownAnswer(name, current)).approve, already: true };
    return { approve, already: false };
  }

  /**
   * The teammate's answer to a shutdown request, as sent (the response message
   * is the record of it). A turn that ended without respond_shutdown is a
   * refusal, its final text the reason, so the Lead always gets an answer.
   */
  async shutdownAnswer(name: AgentName, request: MailboxMessage, finalText?: string): Promise<ShutdownResponse> {
    const id = derivedId(request.id, "shutdown_response");
    const found = await this.#team.o.store.find(id);
    if (found?.message) return parseProtocolContent(ShutdownResponse, found.message);
    const answer = { approve: false, reason: `${name} ended its turn without answering the shutdown request; it said: ${finalText ?? "(nothing)"}` };
    await this.#mail.sendOnce(name, LEAD, "shutdown_response", JSON.stringify(answer), { inReplyTo: request.id, requestId: requestIdOf(request) }, id);
    return answer;
  }

  /**
   * Empties the mailbox of a teammate shut down by an approved request — at the
   * approval, and again by a new runtime (the last one may have died before):
   * the request it approved is acked; every message queued behind it is
   * answered "shut down" to its sender, then acked, instead of waiting in
   * `ready/` for ever. Each answer's id is derived from what it answers, so a
   * replay after a crash sends none twice.
   */
  async settleRetired(name: AgentName, why = "approved a shutdown request"): Promise<void> {
    const store = this.#team.o.store;
    await store.recover(name);
    for (let message = await store.claim(name); message; message = await store.claim(name)) {
      const answered = message.kind === "shutdown_request" && (await store.find(derivedId(message.id, "shutdown_response")))?.message;
      if (!answered) await this.#answerShutDown(name, message, why);
      await store.ack(message);
    }
  }

  /**
   * Tells the sender of `message` that `name` shut down without reading it: a
   * teammate that still takes messages gets a `message`; the Lead — and, through
   * it, the operator (`user`) — a `result` naming what was not read. Protocol
   * answers (a plan review, a permission verdict) need no reply; a second
   * shutdown request is answered as approved, which it already is.
   */
  async #answerShutDown(name: AgentName, message: MailboxMessage, why: string): Promise<void> {
    const id = derivedId(message.id, "shut_down");
    const reply = { inReplyTo: message.id, requestId: requestIdOf(message) };
    if (message.kind === "shutdown_request") {
      await this.#mail.sendOnce(name, LEAD, "shutdown_response", JSON.stringify({ approve: true, reason: `${name} has already shut down` }), reply, derivedId(message.id, "shutdown_response"));
      return;
    }
    if (isProtocolKind(message.kind)) return;
    const peer = message.sender === LEAD ? undefined : this.#team.workers.get(message.sender);
    const peerListens = peer !== undefined && !peer.retired && peer.record.state !== "failed" && peer.record.state !== "shutdown";
    const what = `${message.kind} ${message.id} from ${message.sender}`;
    const notice = `shut down: ${name} ${why} and stopped before reading the ${what}`;
    try {
      if (peerListens) await this.#mail.deliver(name, message.sender, "message", notice, id, message.id);
      else await this.#mail.deliver(name, LEAD, "result", message.sender === LEAD ? notice : `${notice}: ${preview(message.content)}`, id, message.id);
    } catch (error) {
      if (!(error instanceof DuplicateMessageIdError)) throw error;
    }
  }

  /**
   * A teammate in plan mode submits its plan: a `plan_approval_request` to the
   * Lead (request id derived from the input it works on, so a replayed turn
   * submits the same one), open until the Lead's review_plan.
   */
  async submitPlan(name: AgentName, plan: string): Promise<string> {
    const team = this.#team;
    const worker = team.workers.get(name);
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
    await team.setPlan(name, { state: "submitted", requestId });
    await this.#mail.sendOnce(name, LEAD, "plan_approval_request", content, { inReplyTo: current.id, requestId }, requestId);
    return requestId;
  }

  /**
   * The Lead's review of a submitted plan: a `plan_approval_response` to the
   * teammate. Approval lifts it to its normal permission mode from the turn
   * that reads the answer; a rejection keeps it in plan mode with the feedback.
   *
   * A teammate another process holds (a Lead with --remote-teammates) has one
   * writer of its record, its holder: the answer goes to it as that message
   * alone, which its loop applies when it takes it up. Written here too, the
   * Lead's record, read before the holder's last write, landed over it.
   */
  async reviewPlan(name: string, requestId: string, approve: boolean, feedback: string): Promise<void> {
    const team = this.#team;
    team.refuseWhenClosing("review a plan");
    const worker = team.usable(name);
    const plan = worker.record.plan;
    if (!plan) throw new TeammateUnavailableError(`teammate "${name}" was not spawned with plan_mode_required and has no plan to review`);
    if (plan.state !== "submitted" || plan.requestId !== requestId) {
      const open = plan.state === "submitted" ? `its open plan request is ${plan.requestId}` : plan.state === "approved" ? "its plan is already approved" : "it has no plan waiting for review";
      throw new TeammateUnavailableError(`request_id ${requestId} is not ${name}'s open plan request: ${open}`);
    }
    const reply = { inReplyTo: requestId, requestId };
    const sent = await this.#mail.sendOnce(LEAD, worker.record.name, "plan_approval_response", JSON.stringify({ approve, feedback }), reply, derivedId(requestId, "plan_approval_response"));
    if (!team.runsHere(worker.record.name)) {
      // This view of its plan is older than its holder's, which has not read the answer yet.
      if (!sent) throw new TeammateUnavailableError(`request_id ${requestId} is answered already; ${name} applies that answer when it reads it`);
      return;
    }
    // Also set when the teammate takes the answer up: a runtime killed here still lifts it.
    await team.setPlan(worker.record.name, { state: approve ? "approved" : "drafting" });
    team.startWorker(worker.record.name);
  }
}

/** The start of what was not read, so the Lead can tell the operator or send it elsewhere. */
function preview(content: string): string {
  const line = content.replace(/\s+/g, " ").trim();
  return line.length <= 200 ? JSON.stringify(line) : JSON.stringify(`${line.slice(0, 199)}…`);
}
