import { type AgentName, LEAD } from "../core/agent-name.ts";
import { DuplicateMessageIdError } from "../core/errors.ts";
import { createMessage, type MailboxMessage } from "../core/message.ts";
import { eventEnvelope, eventFromMessage } from "../core/runtime-event.ts";
import { isProtocolKind, PlanApprovalResponse, tryProtocolContent } from "../protocols/protocol-messages.ts";
import { TaskRefusedError } from "../tasks/task-errors.ts";
import type { AutoClaim } from "./auto-claim.ts";
import { derivedId } from "./derived-id.ts";
import { inPlanMode, type TeamContext, type Worker } from "./team-context.ts";
import { idleNotice, type TeamMail, replyTarget } from "./team-mail.ts";
import { TeammateUnavailableError } from "./teammate-errors.ts";
import type { TeammateProtocols } from "./teammate-protocols.ts";
import { withWorktreeReport } from "./teammate-worktree-steps.ts";
import { midTurnMail } from "./mid-turn-mail.ts";
import { stopIfHookAsked } from "./hook-stop.ts";

const ACK_ATTEMPTS = 3;
/** What a teammate whose task's completion a hook refused is asked next, after the hook's reason. */
const KEEP_WORKING_ON_TASK = "Keep working on the task. When it is done, answer with what you did: your answer goes to the Lead as the task's result and the task is marked completed.";

/**
 * What the model reads for a message: a task (the Lead's, or one it claimed) is
 * its text, as its first prompt always was; every other message — a peer's, the
 * operator's, a result, a protocol request — comes in the event envelope the
 * Lead's events use, so the teammate knows who wrote it and what it answers.
 */
export function teammatePrompt(message: MailboxMessage): string {
  return message.kind === "task" ? message.content : eventEnvelope(eventFromMessage(message));
}
const ACK_RETRY_MS = 50;

/**
 * A message acked: `next` is what the store claimed with the ack (null: the
 * mailbox was empty), `pokes` the count read before that claim; `next`
 * undefined when the ack came alone and the loop claims as usual.
 */
interface Finished {
  next: MailboxMessage | null | undefined;
  pokes: number;
}

/**
 * Each teammate's loop: claim a message → run it with the message id as
 * idempotency key → its result to the Lead → ack; idle when the mailbox is
 * empty (after taking the next free task, for a self-claiming teammate). The
 * ack of one message and the claim of the next are one store call
 * (`ackAndClaim`: one commit on PostgreSQL instead of two).
 */
export class TeammateLoop {
  readonly #team: TeamContext;
  readonly #mail: TeamMail;
  readonly #protocols: TeammateProtocols;
  readonly #autoClaim: AutoClaim | undefined;

  constructor(team: TeamContext, mail: TeamMail, protocols: TeammateProtocols, autoClaim: AutoClaim | undefined) {
    this.#team = team;
    this.#mail = mail;
    this.#protocols = protocols;
    this.#autoClaim = autoClaim;
  }

  /**
   * Starts the teammate's loop unless it already runs (or may not). `claimed`:
   * a message already in its processing/ (sent there by its spawn), taken first.
   */
  start(name: AgentName, claimed?: MailboxMessage): void {
    const team = this.#team;
    const worker = team.workers.get(name);
    if (!worker) return;
    worker.pokes += 1;
    if (worker.active && worker.settling) {
      // Storing that it is idle, its loop will go round for this: at work again now, or a
      // quiet check before the store call returns ends the run with the message unanswered.
      worker.settling = false;
      team.changed();
    }
    if (worker.active || team.closing) return;
    if (worker.record.state === "failed" || worker.record.state === "shutdown") return;
    // Another process runs it (or will, once it sees the message): this one must not.
    if (!team.runsHere(name)) return;
    worker.active = true;
    if (claimed) this.#claimed(name, worker, claimed);
    const first = claimed ? { next: claimed, pokes: worker.pokes } : undefined;
    worker.job = team.o.supervisor.start(`teammate ${name}`, (signal) => this.#work(name, worker, signal, first));
  }

  async #work(name: AgentName, worker: Worker, signal: AbortSignal, first?: Finished): Promise<void> {
    const team = this.#team;
    // The last message's ack, when it claimed the next one too (or the message the loop starts on).
    let finished: Finished | undefined = first;
    // The id of the last message this loop ran a turn for: an empty mailbox after it begins an idle
    // period (#goIdle). At first, the one whose notice a killed runtime owes (see owedIdleNotice).
    let lastWorked: string | undefined = worker.owedIdle;
    worker.owedIdle = undefined;
    // The pokes the loop had seen when it last found its mailbox empty and left:
    // a send in the few steps from that look to `active = false` found the loop
    // still active and started none, so the loop starts again for it.
    let leftIdle: number | undefined;
    // The ack of a message whose idle notice went out with its result, awaited by TeammateRuntime.acked.
    let acking: ReturnType<typeof Promise.withResolvers<void>> | undefined;
    const ackedNow = () => {
      acking?.resolve();
      acking = undefined;
      worker.acking = undefined;
    };
    // A result is in the Lead's mailbox but not yet in its inbox (worker.finishing):
    // fed before the next turn or at the end, so the idle notice that may follow comes with it.
    const payLead = async () => {
      if (!worker.finishing) return;
      try {
        await team.pumpLead();
      } finally {
        worker.finishing = false;
      }
    };
    try {
      for (;;) {
        // A message the last ack claimed is worker.current: close() releases it.
        if (signal.aborted) return;
        let pokes: number;
        let message: MailboxMessage | null;
        if (finished !== undefined && finished.next !== undefined) {
          ({ pokes, next: message } = finished);
        } else {
          pokes = worker.pokes;
          message = await team.o.store.claim(name);
          if (message) this.#claimed(name, worker, message);
        }
        finished = undefined;
        if (!message) {
          // A message sent while this claim ran found the loop still active and
          // did not start another: look again before stopping.
          if (worker.pokes !== pokes) continue;
          // Idle with auto-claim: the next task of the graph, if one is free, becomes its next message.
          if (worker.record.autoClaim && this.#autoClaim && (await this.#autoClaim.claimNext(name))) continue;
          if (lastWorked !== undefined) {
            if (signal.aborted) return;
            const idle = await this.#goIdle(name, worker, lastWorked, pokes);
            if (idle === "stopped") return;
            // Kept working (its next message is in the mailbox), or a message came meanwhile: claim it.
            if (idle === "busy") continue;
            lastWorked = undefined;
            if (idle === "kept") continue;
          }
          await payLead();
          // Its work is over once its idle notice is with the Lead: the Lead's
          // wait for a quiet team does not wait for team.json to say so too.
          worker.settling = true;
          try {
            await team.settleIdle(name);
          } finally {
            worker.settling = false;
          }
          // Storing the state may have yielded to a send that found the loop active.
          if (worker.pokes !== pokes) continue;
          leftIdle = pokes;
          // Idle, it keeps no runner: its history, tools and prompt are rebuilt from disk by
          // its next message, so an idle teammate costs its record, not its conversation.
          worker.runner?.close();
          worker.runner = undefined;
          return;
        }
        // Back to work after an idle notice sent with its last result: the Lead waits for it again.
        if (worker.settling) {
          worker.settling = false;
          team.changed();
        }
        // Its verdict went to the call that asked, in this process: the message is the record of it, not a turn.
        if (message.kind === "permission_response") {
          finished = await this.#finish(name, worker, message, true);
          if (!finished) return;
          continue;
        }
        await payLead();
        // Stored while the runner is built: the state says what the team sees, the
        // message in processing/ is what a restore goes by.
        const running = team.setState(name, "running");
        // Awaited below; a failure before that (the runner not built) is the one reported.
        running.catch(() => {});
        // The answer itself decides: the Lead's runtime may have died before it recorded it.
        const plan = worker.record.plan;
        if (message.kind === "plan_approval_response" && plan?.state === "submitted" && plan.requestId === message.requestId) {
          const answer = tryProtocolContent(PlanApprovalResponse, message);
          if (answer) await team.setPlan(name, { state: answer.approve ? "approved" : "drafting" });
        }
        // Plan approval changes its permission mode from the turn that reads the answer on.
        const planMode = inPlanMode(worker.record);
        if (worker.runner && worker.runnerInPlanMode !== planMode) {
          worker.runner.close();
          worker.runner = undefined;
        }
        if (!worker.runner) {
          worker.runner = await team.o.makeRunner(worker.record);
          worker.runnerInPlanMode = planMode;
        }
        // Stored before the turn: a holder stopped during the turn (SIGSTOP, a
        // lease run out) must not write "running" after another took the teammate over.
        await running;
        const prompt = teammatePrompt(message);
        // A protocol turn (a shutdown it may approve, a plan's answer) takes nothing mid-turn:
        // a word for after a shutdown must get its "shut down" answer, not join the last turn.
        const midTurn = team.o.midTurnDelivery === false || isProtocolKind(message.kind) ? undefined : midTurnMail(team, name);
        let failure: string | undefined;
        // Its result and its idle notice: their files made while the model works.
        team.o.store.reserve?.(2);
        try {
          const runner = worker.runner;
          // The message stays in processing/ until its ack, after the turn.
          const result = await runner.run(prompt, { idempotencyKey: message.id, signal, promptKept: true, ...(midTurn ? { midTurn } : {}) });
          // close() releases the message; a turn stopped by the budget resumes in `agent drain`.
          if (result.subtype === "error_interrupted" || result.subtype === "error_budget") return;
          if (runner.history.turnOf(message.id) !== message.id) {
            // It came mid-turn and joined another turn (a crash kept it from its ack): answered, or failed, there.
            finished = await this.#finish(name, worker, message, true);
            lastWorked = message.id;
            if (!finished) return;
          } else if (result.isError) failure = result.result;
          else if (message.kind === "shutdown_request") {
            // Its answer is the shutdown_response, not a result. Approved: shut
            // down in team.json before the ack (a restore acks a request left behind).
            const answer = await this.#protocols.shutdownAnswer(name, message, result.result);
            if (answer.approve) {
              worker.retired = true;
              await team.setState(name, "shutdown");
              worker.runner?.close();
              worker.runner = undefined;
              // Retired: no next message for it. What is queued behind the request
              // is answered "shut down" to its senders, not left in ready/ for ever.
              await this.#finish(name, worker, message, false);
              await this.#protocols.settleRetired(name);
              worker.current = undefined;
              return;
            }
            finished = await this.#finish(name, worker, message, true);
            lastWorked = message.id;
            if (!finished) return;
          } else {
            // A task it claimed itself: completed before the Lead hears the result (a replay completes it again harmlessly).
            const refused = message.taskId !== undefined && message.sender === name ? await this.#completeTask(name, message.taskId) : undefined;
            const answer = await withWorktreeReport(team, worker.record, result.result);
            if (refused !== undefined) {
              // The TaskCompleted hook said no: the task stays in progress and the teammate goes on with the hook's reason.
              await this.#keepWorking(name, derivedId(message.id, "task-refused"), `${refused}\n\n${KEEP_WORKING_ON_TASK}`, message.taskId);
            } else if (this.#idleWithResult(worker, message, pokes, runner.history.joinedTo(message.id))) {
              worker.finishing = true;
              await this.#mail.deliverResultWithIdle(name, message, answer);
              worker.idleNoticed = message.id;
              // Its work is over once both are with the Lead: the Lead's event turn
              // does not wait for its ack (a message found by the claim after it
              // puts it back to work), a wait for the team's end does
              // (TeammateRuntime.acked). Shown idle at once; team.json is told meanwhile.
              acking = Promise.withResolvers<void>();
              worker.acking = acking.promise;
              worker.settling = true;
              void team.settleIdle(name).catch(() => {});
              await payLead();
            } else {
              // Set before the send: a pump another part runs meanwhile may publish the result early.
              if (replyTarget(name, message) === LEAD) worker.finishing = true;
              await this.#mail.deliverResult(name, message, answer, false);
            }
            await this.#mail.deliverJoinedResults(name, message, runner.history.joinedTo(message.id), answer);
            // The work is done and its result is with the Lead: from here a
            // storage failure must not fail the teammate or quarantine the input.
            try {
              finished = await this.#finish(name, worker, message, true);
            } finally {
              ackedNow();
            }
            lastWorked = message.id;
            if (!finished) return;
            // A TaskCompleted hook of this turn's completion answered `continue: false`.
            if (await stopIfHookAsked(this.#team, this.#mail, this.#protocols, { name, worker, lastWorked: message.id })) return;
          }
        } catch (error) {
          if (signal.aborted) return;
          // Taken over by another process (e.g. its history refused this one's
          // append, HISTORY_CONFLICT, before a heartbeat noticed): not a failure of
          // the teammate. Its message is the new holder's, which carries on from history.
          if (!(await team.stillHeld(name))) return;
          failure = error instanceof Error ? error.message : String(error);
        }
        if (failure !== undefined) {
          await this.#fail(name, worker, message, failure);
          return;
        }
      }
    } finally {
      try {
        await payLead();
      } catch {
        // The result is in the Lead's mailbox: the Lead's next pump takes it.
      }
      ackedNow();
      const poked = leftIdle !== undefined && worker.pokes !== leftIdle && !signal.aborted;
      worker.active = false;
      worker.settling = false;
      // Ended: an idle teammate keeps no handle (its signal, controller and closures) of a loop that ran.
      worker.job = undefined;
      team.changed();
      if (poked) this.start(name);
    }
  }

  /**
   * A teammate that worked and whose mailbox is empty: the TeammateIdle gate
   * first — a refusal sends the gate's reason to the teammate itself as its
   * next task ("kept") — then one `idle` notice to the Lead. The notice's id
   * is derived from the last message worked, so one idle period is noticed
   * once however often the loop looks (a replay's duplicate is refused by the
   * store). Sent before the state says idle: a Lead that sees it idle finds
   * the notice in its mailbox. "busy": a message came while the gate ran.
   */
  async #goIdle(name: AgentName, worker: Worker, lastWorked: string, pokes: number): Promise<"idle" | "kept" | "busy" | "stopped"> {
    // Its notice went with its result (#idleWithResult) and nothing came since.
    if (worker.idleNoticed === lastWorked) return worker.pokes !== pokes ? "busy" : "idle";
    const gate = this.#team.o.idleGate;
    const refusal = gate ? await gate({ name, role: worker.record.role, workspace: worker.record.worktree?.workspace }) : undefined;
    if (await stopIfHookAsked(this.#team, this.#mail, this.#protocols, { name, worker, lastWorked })) return "stopped";
    if (refusal !== undefined) {
      await this.#keepWorking(name, derivedId(lastWorked, "teammate-idle"), `TeammateIdle hook feedback:\n${refusal}`);
      return "kept";
    }
    if (worker.pokes !== pokes) return "busy";
    try {
      await this.#mail.deliver(name, LEAD, "idle", idleNotice(name), derivedId(lastWorked, "idle"), lastWorked);
    } catch (error) {
      if (!(error instanceof DuplicateMessageIdError)) throw error;
    }
    return "idle";
  }

  /**
   * Whether a finished turn's idle notice may go out with its result, before
   * the ack: the result is for the Lead, nothing was sent to the teammate
   * during the turn (its pokes) or joined it, and nothing decides otherwise
   * after the ack — no TeammateIdle gate (whose hook may keep it working), no
   * auto-claim (which may find it a task). So the Lead, whose event turn waits
   * for the notice, does not also wait for the ack and the look at an empty
   * mailbox. A message another process sends meanwhile is found by the claim
   * after the ack: the teammate works on it, as after any idle notice.
   */
  #idleWithResult(worker: Worker, message: MailboxMessage, pokes: number, joined: readonly string[]): boolean {
    return (
      replyTarget(worker.record.name, message) === LEAD &&
      worker.pokes === pokes &&
      joined.length === 0 &&
      this.#team.o.idleGate === undefined &&
      !(worker.record.autoClaim && this.#autoClaim) &&
      !worker.retired
    );
  }

  /** Gives the teammate its next prompt itself (a hook's reason), as a task it sends itself under a derived id: a replay sends nothing twice. */
  async #keepWorking(name: AgentName, id: string, content: string, taskId?: string): Promise<void> {
    const team = this.#team;
    const message = createMessage({ sender: name, recipient: name, kind: "task", content, ...(taskId !== undefined ? { taskId } : {}) }, { clock: team.o.clock, ids: { next: () => id } });
    try {
      await this.#mail.sendBuilt(message);
    } catch (error) {
      if (!(error instanceof DuplicateMessageIdError)) throw error;
    }
  }

  /** Completes a self-claimed task; returns the TaskCompleted hook's refusal, if it refused. */
  async #completeTask(name: AgentName, taskId: string): Promise<string | undefined> {
    if (!this.#autoClaim) throw new TeammateUnavailableError(`${name} worked task ${taskId} but this runtime has no task graph to complete it in`);
    try {
      await this.#autoClaim.complete(name, taskId);
      return undefined;
    } catch (error) {
      if (error instanceof TaskRefusedError) return error.message;
      throw error;
    }
  }

  #claimed(name: AgentName, worker: Worker, message: MailboxMessage): void {
    this.#team.emit({ type: "mailbox", op: "claim", agent: name, id: message.id, from: message.sender, kind: message.kind });
    worker.current = message;
  }

  /**
   * Acks a message whose result was delivered — with `claimNext`, claiming the
   * next one in the same store call — retrying (an ack is idempotent: a retry
   * after one that did land succeeds). A retry is a plain ack, whether the first
   * call failed in its ack or in its claim: the loop then claims as usual. If it
   * still fails the message goes back to ready/ — claimed again, its turn replays
   * from history and its result is refused as a duplicate, so the Lead still gets
   * it once — and the loop stops until the next message pokes it. Returns
   * undefined when the ack did not land.
   */
  async #finish(name: AgentName, worker: Worker, message: MailboxMessage, claimNext: boolean): Promise<Finished | undefined> {
    const team = this.#team;
    const event = { agent: name, id: message.id, from: message.sender, kind: message.kind };
    for (let attempt = 1; ; attempt += 1) {
      try {
        // Read before the claim: a message sent while it runs pokes after this.
        const pokes = worker.pokes;
        let next: MailboxMessage | null | undefined;
        if (claimNext && attempt === 1) next = await team.o.store.ackAndClaim(message, name);
        else await team.o.store.ack(message);
        team.emit({ type: "mailbox", op: "ack", ...event });
        worker.current = undefined;
        if (next) this.#claimed(name, worker, next);
        return { next, pokes };
      } catch (error) {
        if (attempt >= ACK_ATTEMPTS) break;
        await Bun.sleep(ACK_RETRY_MS * attempt);
      }
    }
    try {
      await team.o.store.release(message);
      team.emit({ type: "mailbox", op: "release", ...event });
      worker.current = undefined;
    } catch {
      // Still in processing/ as worker.current: close() releases it, or the next
      // runtime's restore recovers it.
    }
    if (!worker.retired) await team.setState(name, "idle");
    return undefined;
  }

  /**
   * The tasks a failed teammate claimed go back to pending, each with a note
   * saying why, so another can take them (they stayed in_progress forever).
   * Returns what the Lead's failure message says of them.
   */
  async #returnTasks(name: AgentName, reason: string): Promise<string> {
    const tasks = this.#team.o.tasks;
    if (!tasks) return "";
    try {
      const back = await tasks.releaseOwnedBy(name, `back to pending: its owner ${name} failed (${clipReason(reason)})`);
      if (back.length === 0) return "";
      return `; its task${back.length === 1 ? "" : "s"} ${back.map((task) => task.id).join(", ")} ${back.length === 1 ? "is" : "are"} pending again`;
    } catch (error) {
      return `; its tasks could not be put back to pending (${(error as Error).message})`;
    }
  }

  /** A failure is an event, not a log line: input quarantined, state failed, the Lead told. */
  async #fail(name: AgentName, worker: Worker, message: MailboxMessage, reason: string): Promise<void> {
    const team = this.#team;
    try {
      await team.o.store.quarantine(message, `teammate ${name} failed: ${reason}`);
      team.emit({ type: "mailbox", op: "quarantine", agent: name, id: message.id, from: message.sender, kind: message.kind });
    } finally {
      worker.current = undefined;
      await team.setState(name, "failed", reason);
      const returned = await this.#returnTasks(name, reason);
      try {
        await this.#mail.deliver(name, LEAD, "result", `teammate ${name} failed on message ${message.id} and stopped: ${reason}${returned}`, undefined, message.id);
      } catch {
        // Best effort: the failure is also in team.json and in quarantine/.
      }
    }
  }
}

/** A failure reason as a task's note keeps it: one line, not a whole stack of output. */
function clipReason(reason: string): string {
  const line = reason.split("\n")[0] ?? "";
  return line.length <= 200 ? line : `${line.slice(0, 199)}…`;
}
