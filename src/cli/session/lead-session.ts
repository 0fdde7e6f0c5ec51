import type { IdSource } from "../../core/ids.ts";
import type { LeadRuntime } from "../../app/lead.ts";
import { settleFinishing } from "../../app/until-quiet.ts";
import type { RunResult } from "../../runtime/run-types.ts";
import type { SessionInput } from "./session-input.ts";

export interface LeadSessionOptions {
  lead: Pick<LeadRuntime, "runner" | "inbox" | "team">;
  input: SessionInput;
  /** The Lead's answers: stdout. */
  answer: (text: string) => void;
  /** Errors and notes: stderr. */
  note: (text: string) => void;
  ids: IdSource;
  /** Handles a line that is a session command or a message to a teammate; false means it is a request for the Lead, "end" ends this session (`/exit`, `/new`). */
  command?: (line: string) => Promise<boolean | "end">;
  /** Told when a turn of the Lead (user or event) is over. */
  turnEnded?: () => void;
  /** Whether a user turn's answer was already printed as it streamed in (so it is not printed again). */
  streamed?: (result: string) => boolean;
  /** Called with each request once its turn is in the history (the session records its first prompt). */
  onAccepted?: (request: string) => void;
  /** Milliseconds now (Ctrl-C twice within AGAIN_MS); Date.now by default. */
  clock?: () => number;
}

/** A second Ctrl-C within this long of the first is the "I mean it" press. */
const AGAIN_MS = 2000;

const EXIT_WORDS = new Set(["exit", "quit"]);
/** How long to give the mailbox before retrying an event whose acknowledgement failed. */
const ACK_RETRY_MS = 50;

/**
 * An interactive session with the Lead: each line the user enters is one user
 * turn; between them, what teammates send arrives as event turns, run in the
 * background and printed as they happen. The runner's turn lock keeps the two
 * apart: an event never enters a user turn, and events that arrive during one
 * wait for it to end. Ctrl-C as in the tools people know: during a turn the
 * first cancels it (the runner stops the request and tools, the history stays
 * whole) and a second within 2 s ends the session as interrupted (exit 130);
 * at the prompt the first clears the line and says how to leave, a second
 * within 2 s ends the session like Ctrl-D or `exit`.
 */
export class LeadSession {
  readonly #o: LeadSessionOptions;
  readonly #closing = new AbortController();
  /** The user turn in progress, which event turns wait for. */
  #userTurn: Promise<unknown> | undefined;
  /** Aborts the turn in progress, user or event. */
  #turnAbort: AbortController | undefined;
  /** When the last Ctrl-C came, and whether it cancelled a turn. */
  #interrupt = { at: Number.NEGATIVE_INFINITY, cancelled: false };
  #forcedExit = false;

  constructor(options: LeadSessionOptions) {
    this.#o = options;
    options.input.onInterrupt = () => this.#interrupted();
  }

  /** True when the user left with a second Ctrl-C during a turn: the command exits 130. */
  get forcedExit(): boolean {
    return this.#forcedExit;
  }

  #interrupted(): void {
    const now = (this.#o.clock ?? Date.now)();
    const again = now - this.#interrupt.at <= AGAIN_MS;
    const { cancelled } = this.#interrupt;
    this.#interrupt = { at: now, cancelled: false };
    const input = this.#o.input;
    if (again && cancelled) {
      this.#forcedExit = true;
      this.#turnAbort?.abort();
      input.close();
      return;
    }
    const turn = this.#turnAbort;
    if (turn && !turn.signal.aborted) {
      this.#interrupt.cancelled = true;
      turn.abort();
      return;
    }
    if (again) {
      input.close();
      return;
    }
    input.clearLine();
    // note prints above the prompt (the screen redraws the input line below it).
    this.#o.note("agent: Ctrl-C again within 2 s to leave (or type exit)\n");
  }

  /** Runs until the input ends or the user leaves; event turns in progress are interrupted then. */
  async run(): Promise<void> {
    const events = this.#eventTurns();
    try {
      for (let line = await this.#o.input.next(); line !== null; line = await this.#o.input.next()) {
        const request = line.trim();
        if (request.length === 0) continue;
        if (EXIT_WORDS.has(request)) break;
        const handled = await this.#o.command?.(request);
        if (handled === "end") break;
        if (handled) continue;
        await this.#runUserTurn(line);
      }
    } finally {
      this.#closing.abort();
      this.#turnAbort?.abort();
      await events;
    }
  }

  /** True while a user turn runs: its answer may stream to the terminal (event turns print theirs whole, above the prompt). */
  get inUserTurn(): boolean {
    return this.#userTurn !== undefined;
  }

  /** Ends the session from outside (SIGTERM, a lost lock): as if the input ended. */
  stop(): void {
    this.#o.input.close();
  }

  async #runUserTurn(prompt: string): Promise<void> {
    const controller = new AbortController();
    this.#turnAbort = controller;
    // A question that waited for this line to be entered may be asked during the turn.
    this.#o.input.handled();
    const turn = this.#o.lead.runner.run(prompt, {
      idempotencyKey: this.#o.ids.next(),
      signal: controller.signal,
      onAccepted: () => this.#o.onAccepted?.(prompt),
    });
    this.#userTurn = turn;
    try {
      const result = await turn;
      if (result.isError || !this.#o.streamed?.(result.result)) this.#show(result, "the turn");
    } catch (error) {
      // One broken turn does not end the session; the history stays consistent.
      this.#o.note(`agent: the turn failed: ${(error as Error).message}\n`);
    } finally {
      this.#userTurn = undefined;
      this.#turnAbort = undefined;
      this.#o.turnEnded?.();
    }
    // Messages sent to the Lead by another process (`agent mailbox send`) meanwhile.
    await this.#o.lead.team.pumpLead().catch(() => {});
  }

  /** The background loop: event turns as events arrive, never during a user turn. */
  async #eventTurns(): Promise<void> {
    const { runner, inbox } = this.#o.lead;
    const closing = this.#closing.signal;
    while (!closing.aborted) {
      await inbox.waitForEvent(closing);
      if (closing.aborted) return;
      // Idle notices alone wait while teammates work, as in `agent run`: they join the next result's turn.
      if (inbox.holdsOnly("idle") && this.#o.lead.team.hasPendingWork()) {
        await Promise.race([inbox.nextPublish(closing), this.#o.lead.team.nextChange(closing)]);
        continue;
      }
      if (this.#userTurn) {
        await this.#userTurnEnd();
        continue;
      }
      const controller = new AbortController();
      this.#turnAbort = controller;
      const abort = () => controller.abort();
      closing.addEventListener("abort", abort, { once: true });
      try {
        const round = await runner.runEvents(inbox, {
          signal: controller.signal,
          settle: (batch) => settleFinishing(this.#o.lead, batch, controller.signal),
          // The batch waits for no company: it is whole once nobody is deciding whether an idle notice follows a result.
          quiet: () => !this.#o.lead.team.finishing() && inbox.size === 0,
        });
        if (round.turns.length > 0) this.#o.turnEnded?.();
        for (const { result } of round.turns) this.#show(result, "the event turn");
        // A user turn took the lock first: wait for it (or a moment, if it is already over).
        if (round.deferred) await this.#userTurnEnd();
        if (round.ackFailed) await Bun.sleep(ACK_RETRY_MS);
      } catch (error) {
        this.#o.note(`agent: an event turn failed: ${(error as Error).message}\n`);
        await Bun.sleep(ACK_RETRY_MS);
      } finally {
        closing.removeEventListener("abort", abort);
        if (this.#turnAbort === controller) this.#turnAbort = undefined;
      }
    }
  }

  /** Settles when the user turn in progress is over (after a moment, when there is none). */
  #userTurnEnd(): Promise<unknown> {
    return this.#userTurn ? this.#userTurn.catch(() => {}) : Bun.sleep(10);
  }

  #show(result: RunResult, what: string): void {
    if (result.isError) this.#o.note(`agent: ${what} ended with ${result.subtype}: ${result.result}\n`);
    else if (result.result.length > 0) this.#o.answer(result.result.endsWith("\n") ? result.result : `${result.result}\n`);
  }
}
