import { type Clock, systemClock } from "../core/clock.ts";
import { BudgetExceededError, ContextOverflowError, EmptyModelAnswerError, ModelError, ModelRefusalError, UsageError } from "../core/errors.ts";
import type { Hooks } from "../hooks/types.ts";
import {
  addUsage,
  type ChatMessage,
  type ModelClient,
  type ModelResponse,
  type ModelRetryInfo,
  type ToolCall,
  type Usage,
  ZERO_USAGE,
} from "../model/types.ts";
import { Mutex } from "../storage/process-mutex.ts";
import { StreamRedactor } from "../security/stream-redact.ts";
import { AnswerPieces } from "./answer-pieces.ts";
import { redact } from "../security/redact.ts";
import type { PathFence } from "../core/tool.ts";
import type { ToolExecutor } from "./tool-executor.ts";
import { type CompactionOptions, compact } from "./compaction.ts";
import { sizeOf } from "./history-size.ts";
import { AheadCall } from "./ahead-call.ts";
import { LEAD } from "../core/agent-name.ts";
import { type AppendOptions, asStored, type HistoryStore } from "./history-store.ts";
import { eventEnvelope, type RuntimeEvent } from "../core/runtime-event.ts";
import type { EventInbox, InboxEntry, MidTurnSource } from "./event-inbox.ts";
import type { RunEvent, RunObserver, RunOptions, RunResult, RunSubtype } from "./run-types.ts";

/**
 * What one event turn takes in: every event waiting, as long as their envelopes
 * stay within this share of the compaction threshold (always at least one), so
 * one model request never has to take in more than a turn's worth of history.
 * 32 teammates' results are one turn; a flood of long ones is several.
 */
export const EVENT_TURN_SHARE = 4;

/** The most messages one step of a turn takes in mid-turn: more wait for the next step. */
const MAX_MID_TURN_MESSAGES = 16;

export interface EventTurnsOptions {
  signal?: AbortSignal;
  /**
   * Asked when the inbox is empty and a batch has a turn to run, before that
   * turn starts: resolves true when more events may be waiting now (they join
   * the batch), false to run the turn. `startedAt` is when the batch began and
   * `lastEventAt` when its latest event was taken (performance.now()), to bound the wait.
   */
  settle?: (batch: { startedAt: number; lastEventAt: number }) => Promise<boolean>;
  /**
   * Asked once a batch's events are durable in the history: true when no more
   * are expected to join it (nothing else at work), so its model request may go
   * out while they are acknowledged (see AgentRunner.runEvents).
   */
  quiet?: () => boolean;
}

export interface EventTurnsOutcome {
  /** Events taken from the inbox and acknowledged. */
  processed: number;
  /**
   * The model turns run: one per batch of events that had no finished turn yet.
   * `key` is the turn's key in the history (its first event's id, or the turn
   * a crash left open that the batch's events were in); `event` is the first of `events`.
   */
  turns: { key: string; event: RuntimeEvent; events: RuntimeEvent[]; result: RunResult }[];
  /** True when a user turn was in progress and nothing was taken. */
  deferred: boolean;
  /** True when an acknowledgement failed; that event is back in the inbox. */
  ackFailed: boolean;
}

export interface AgentRunnerOptions {
  /** The agent's name: its tools' identity and the X-Agent-Name of its model requests. */
  identity: string;
  model: ModelClient;
  tools: ToolExecutor;
  hooks: Hooks;
  history: HistoryStore;
  systemPrompt: string;
  workspace: string;
  /** The agent's own state, which its file tools refuse (see src/security/protected-paths.ts). */
  fence?: PathFence;
  /** `--add-dir` directories its file tools may use besides the workspace. */
  addDirs?: readonly string[];
  maxTurns: number;
  compaction: CompactionOptions;
  observer?: RunObserver;
  clock?: Clock;
  /** Asked before each model call; a returned text is added to the history as a reminder (the todo list's). */
  reminder?: () => string | undefined;
  /** Whether `reminder` would give one at the next call, asked without counting it: a call made ahead is not when one is due (none given, it is assumed due). */
  reminderDue?: () => boolean;
  /**
   * Looked at between the steps of every turn — resumed ones and event turns
   * too — unless a run names its own (RunOptions.midTurn). Only for an agent
   * whose turns owe no answer to the message that opened them (the Lead): a
   * teammate's resumed turn could otherwise take in a message whose own turn it
   * is, and its answer would never be sent.
   */
  midTurn?: MidTurnSource;
  /** Told when a turn starts or resumes, and when it ends, however it ends (usage ledger, traces). */
  onTurnStart?: (turn: { key: string }) => void;
  onTurnEnd?: (turn: { key: string; result: RunResult }) => void;
  /** Told when a new turn begins from a prompt (not a resumed one), after SessionStart and before UserPromptSubmit. */
  onPrompt?: (key: string) => void;
}

/** How many times a reply cut off by the output limit is continued before it is taken as it is. */
const MAX_CONTINUATIONS = 3;
const CONTINUE_PROMPT = "Your last reply was cut off by the output limit. Continue exactly where it stopped.";

/** The result of a call whose arguments the output limit cut off: it was not run, and the model is told why. */
function cutOffCall(call: ToolCall): string {
  return (
    `not run: your reply reached its output token limit while writing the arguments of this call, so they are cut off ` +
    `after ${call.arguments.length} characters. Make the call again with shorter arguments (write a long file in several smaller parts).`
  );
}

/** The loop's next step; the run is a walk through these. */
type Step =
  | { next: "call_model" }
  /** `cutOff`: the id of a call whose arguments the output limit cut off; it gets an error result instead of running. */
  | { next: "run_tools"; calls: ToolCall[]; cutOff?: string }
  | { next: "finish"; subtype: RunSubtype; result: string };

/**
 * One agent: its canonical history, tools, hooks, recovery and compaction. Runs
 * one turn at a time (an async lock), each a small state machine: call the
 * model, run the tools it asked for, repeat until it answers without tools.
 */
export class AgentRunner {
  readonly identity: string;
  readonly #o: AgentRunnerOptions;
  readonly #clock: Clock;
  readonly #turnLock = new Mutex();
  #sessionStarted = false;
  /** The model call sendAhead made, until a turn takes or refuses it. */
  #ahead: Promise<AheadCall | undefined> | undefined;

  constructor(options: AgentRunnerOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.#clock = options.clock ?? systemClock;
  }

  get history(): HistoryStore {
    return this.#o.history;
  }

  /** The names of the tools the model is offered now (stream-json's init line). */
  toolNames(): string[] {
    return this.#o.tools.specs().map((spec) => spec.name);
  }

  async run(content: string, options: RunOptions): Promise<RunResult> {
    // Before any history, hook or model call: a turn without a key could not be
    // told apart from its replay.
    if (options.idempotencyKey.trim().length === 0) {
      throw new UsageError("AgentRunner.run needs a non-empty idempotencyKey; pass the message id or a fresh UUID");
    }
    return this.#turnLock.run(() => this.#runTurn(content, options));
  }

  close(): void {
    void this.#ahead?.then((ahead) => ahead?.abandon());
    this.#ahead = undefined;
    this.#o.history.close();
  }

  /**
   * Sends the first model request of a turn for `content` now, when the turn
   * would send exactly that: a fresh history, no hook or reminder that adds to
   * the prompt, nothing to compact. The turn, run later with the same content,
   * takes its answer (see AheadCall); a turn that asks anything else, or a
   * runner closed first, aborts it. For a teammate whose spawn is still being
   * made durable, and the Lead's first prompt of a new session, whose turn
   * makes its history file and first record durable: the model's time and
   * those writes overlap.
   */
  sendAhead(content: string): boolean {
    const o = this.#o;
    if (this.#ahead || o.history.messages.length > 0 || this.#reminderDue()) return false;
    // The Lead's first turn runs the SessionStart hooks first, which may add to its prompt.
    if (this.identity === LEAD && !this.#sessionStarted && (o.hooks.has?.("SessionStart") ?? true)) return false;
    if (o.hooks.has?.("UserPromptSubmit") ?? true) return false;
    const prompt = asStored({ role: "user", content });
    if (sizeOf([prompt]) > o.compaction.thresholdChars) return false;
    this.#ahead = (async () => {
      // As the turn does first: tools that come and go are settled before their specs are read.
      await o.tools.prepare?.(new AbortController().signal);
      return new AheadCall(o.model, { identity: this.identity, messages: [{ role: "system", content: o.systemPrompt }, prompt], tools: o.tools.specs() });
    })();
    return true;
  }

  /**
   * Compacts the history now (`/compact` in a session), between turns: the
   * older part summarised by the model, as when it grows past the threshold.
   * Returns how many messages were summarised (0 when there was too little).
   */
  async compactNow(signal?: AbortSignal): Promise<number> {
    return this.#turnLock.run(async () => {
      const turn = { usage: { inputTokens: 0, outputTokens: 0 } };
      return this.#compactIfNeeded(true, signal, turn, "manual");
    });
  }

  /**
   * Event turns. Takes the events waiting in `inbox` (all of them, bounded by
   * size, see EVENT_TURN_SHARE): those new to the history are written to it in
   * one durable append, then each is acknowledged through its owner; then one
   * model turn answers them all. With `settle`, an empty inbox is asked to wait
   * for more before that turn starts (see there), and what came meanwhile joins
   * the same way. An event already in the history (a retry, or a restart after
   * a crash) is not written again, and is answered only if the turn it is in
   * never finished. The acknowledgements are made at once; the events whose
   * acknowledgement failed go back to the inbox and processing stops before the model turn;
   * the retry neither duplicates the history nor calls the model twice. While a
   * user turn runs, nothing is taken.
   */
  async runEvents(inbox: EventInbox, options: EventTurnsOptions = {}): Promise<EventTurnsOutcome> {
    if (this.#turnLock.busy) return { processed: 0, turns: [], deferred: true, ackFailed: false };
    return this.#turnLock.run(async () => {
      const outcome: EventTurnsOutcome = { processed: 0, turns: [], deferred: false, ackFailed: false };
      for (;;) {
        const batch = await this.#takeBatch(inbox, outcome, options);
        if (batch === undefined || outcome.ackFailed) return outcome;
        if (batch.key !== undefined) {
          this.#emit({ type: "event_turn", agent: this.identity, events: batch.events.map(({ sender, kind }) => ({ sender, kind })) });
          await this.#pairUnansweredCalls();
          const result = await this.#loop(batch.key, options.signal, this.#o.midTurn);
          outcome.turns.push({ key: batch.key, event: batch.events[0]!, events: batch.events, result });
        }
        if (options.signal?.aborted) return outcome;
      }
    });
  }

  /**
   * One batch: the events of one model turn. Returns undefined when the inbox
   * had nothing; `key` is the turn to run (none when every event taken was
   * answered before).
   */
  async #takeBatch(
    inbox: EventInbox,
    outcome: EventTurnsOutcome,
    options: EventTurnsOptions,
  ): Promise<{ key: string | undefined; events: RuntimeEvent[] } | undefined> {
    const batch: { key: string | undefined; events: RuntimeEvent[]; chars: number; full: boolean } = { key: undefined, events: [], chars: 0, full: false };
    const limit = this.#o.compaction.thresholdChars / EVENT_TURN_SHARE;
    let taken = 0;
    const startedAt = performance.now();
    let lastEventAt = startedAt;
    while (!batch.full) {
      const group: InboxEntry[] = [];
      for (let entry = inbox.take(); entry; entry = inbox.take()) {
        const chars = eventEnvelope(entry.event).length;
        if (taken + group.length > 0 && batch.chars + chars > limit) {
          // Over the bound: it opens the next turn.
          inbox.republish(entry);
          batch.full = true;
          break;
        }
        batch.chars += chars;
        group.push(entry);
      }
      if (group.length === 0) {
        // Only a batch with a turn to run waits for company.
        if (!batch.full && batch.key !== undefined && options.settle && !options.signal?.aborted && (await options.settle({ startedAt, lastEventAt }))) continue;
        break;
      }
      taken += group.length;
      lastEventAt = performance.now();
      const accepted = await this.#takeIn(group, batch, inbox);
      // In the history now: with nothing else at work, the turn's request goes out while they are acknowledged.
      if (batch.key !== undefined && accepted.length > 0 && options.quiet?.()) this.#callAhead();
      // All at once: the mailbox stores acks made together with one fsync.
      const acks = await Promise.allSettled(accepted.map(({ event, owner }) => owner.acknowledge(event)));
      const failed = accepted.filter((_, i) => acks[i]!.status === "rejected");
      outcome.processed += accepted.length - failed.length;
      if (failed.length > 0) {
        // Those are retried, in their order; what is in the history stays.
        for (const entry of [...failed].reverse()) inbox.republish(entry);
        for (const [i, ack] of acks.entries()) {
          if (ack.status === "rejected") {
            this.#warn([`acknowledging event ${accepted[i]!.event.eventId} failed (${(ack.reason as Error).message}); it will be retried`]);
          }
        }
        outcome.ackFailed = true;
        return { key: undefined, events: batch.events };
      }
    }
    return taken === 0 ? undefined : { key: batch.key, events: batch.events };
  }

  /**
   * Puts a group of events into the batch's turn: the ones new to the history in
   * one durable write (before any of them is acknowledged), the ones there
   * already (an ack that failed, a crash before it) answered with the batch when
   * their turn is the batch's. An event of another unfinished turn ends the batch
   * (it and the rest of the group go back to the inbox; that turn is next).
   * Returns the entries to acknowledge, in order.
   */
  async #takeIn(
    group: InboxEntry[],
    batch: { key: string | undefined; events: RuntimeEvent[]; full: boolean },
    inbox: EventInbox,
  ): Promise<InboxEntry[]> {
    const history = this.#o.history;
    const accepted: InboxEntry[] = [];
    const fresh: { key: string; messages: ChatMessage[] }[] = [];
    for (const [index, entry] of group.entries()) {
      const id = entry.event.eventId;
      const status = history.turnStatus(id);
      if (status === "started" || status === "interrupted") {
        const turn = history.turnOf(id);
        const key = batch.key ?? fresh[0]?.key;
        if (key !== undefined && turn !== key) {
          // It belongs to another unfinished turn: that one gets its own model turn next.
          for (const later of group.slice(index).reverse()) inbox.republish(later);
          batch.full = true;
          break;
        }
        batch.key = turn;
      } else if (status === undefined) {
        fresh.push({ key: id, messages: [{ role: "user", content: eventEnvelope(entry.event) }] });
      }
      if (status !== "finished") batch.events.push(entry.event);
      accepted.push(entry);
    }
    if (fresh.length > 0) {
      // A turn the process died in may have left tool calls without results: the API refuses those.
      await this.#pairUnansweredCalls();
      await history.openEvents(batch.key, fresh, this.#clock.now());
      batch.key ??= fresh[0]!.key;
      const written = new Set(fresh.map(({ key }) => key));
      for (const { event } of accepted) {
        if (written.has(event.eventId)) {
          this.#emit({ type: "event", agent: this.identity, eventId: event.eventId, source: event.source, sender: event.sender, kind: event.kind });
        }
      }
    }
    return accepted;
  }

  /**
   * Finishes the turns a dead process left in the history (started, never
   * interrupted or finished): above all an event turn whose event was already
   * acknowledged, which nothing would deliver again. Oldest first.
   */
  async resumeAbandoned(signal?: AbortSignal): Promise<{ key: string; result: RunResult }[]> {
    return this.#turnLock.run(async () => {
      const resumed: { key: string; result: RunResult }[] = [];
      for (const key of this.#o.history.abandonedTurns()) {
        if (signal?.aborted) break;
        resumed.push({ key, result: await this.#resume(key, signal, this.#o.midTurn) });
      }
      return resumed;
    });
  }

  async #runTurn(content: string, { idempotencyKey, signal, onAccepted, midTurn = this.#o.midTurn, promptKept }: RunOptions): Promise<RunResult> {
    const o = this.#o;
    const finished = o.history.finishedTurn(idempotencyKey);
    // The same key again (a replayed message): the turn already happened.
    if (finished) return { ...finished, isError: finished.subtype !== "success", turns: 0, usage: ZERO_USAGE, durationMs: 0 };
    const status = o.history.turnStatus(idempotencyKey);
    if (status === "started" || status === "interrupted") {
      // Interrupted earlier (a crash, a shutdown): go on from where the history stops —
      // in the turn it joined, for a message that came mid-turn. That turn's own
      // message may still wait to be taken: it must not join it, so nothing does.
      const key = o.history.turnOf(idempotencyKey);
      return this.#resume(key, signal, key === idempotencyKey ? midTurn : this.#o.midTurn);
    }
    const started = await this.#sessionStart(idempotencyKey, signal);
    o.onPrompt?.(idempotencyKey);
    const prompt = await o.hooks.run("UserPromptSubmit", this.#hookPayload(idempotencyKey, { prompt: content }), {
      workspace: o.workspace,
      signal,
    });
    this.#warn(prompt.warnings);
    const refused = prompt.blocked ?? prompt.stopped;
    if (refused !== undefined) {
      const result = `prompt blocked by UserPromptSubmit hook: ${refused}`;
      return { result, subtype: "error_blocked", isError: true, turns: 0, usage: ZERO_USAGE, durationMs: 0 };
    }
    // What the hooks add rides with the prompt in the history, so a resumed turn still has it.
    const added = [...started, ...(prompt.context ?? [])];
    const sent = added.length === 0 ? content : `${content}\n\n<hook-context>\n${added.join("\n\n")}\n</hook-context>`;
    // A turn a killed process left half done is finished before this one begins:
    // the history must read old prompt, old answer, new prompt — and the answer
    // returned here must be this prompt's, not the old turn's.
    for (const abandoned of o.history.abandonedTurns()) {
      const resumed = await this.#resume(abandoned, signal, this.#o.midTurn);
      if (resumed.subtype === "error_interrupted") return { ...resumed, result: "interrupted before this prompt's turn began" };
    }
    await this.#pairUnansweredCalls();
    await o.history.beginTurn(idempotencyKey, [{ role: "user", content: sent }], this.#clock.now(), promptKept ? { durable: false } : undefined);
    onAccepted?.();
    this.#emit({ type: "user", agent: this.identity, content });
    return this.#loop(idempotencyKey, signal, midTurn);
  }

  /**
   * Goes on with turn `key` from where the history stops: tool calls left
   * unanswered get their results, what came for it while no process ran it
   * joins (from `midTurn`, as between steps), then the loop.
   */
  async #resume(key: string, signal: AbortSignal | undefined, midTurn: MidTurnSource | undefined): Promise<RunResult> {
    await this.#pairUnansweredCalls();
    if (midTurn && !signal?.aborted) await this.#joinMidTurn(key, midTurn);
    return this.#loop(key, signal, midTurn);
  }

  /**
   * The turn's state machine, from a history whose last message awaits the
   * model. `midTurn` is looked at after each step's tool results, before the
   * next model request.
   */
  async #loop(key: string, signal: AbortSignal | undefined, midTurn?: MidTurnSource): Promise<RunResult> {
    const started = performance.now();
    const o = this.#o;
    o.onTurnStart?.({ key });
    const turn = { turns: 0, retries: 0, usage: ZERO_USAGE as Usage, continuations: 0, text: "", overflowRetried: false, stopHookActive: false };
    const done = (subtype: RunSubtype, result: string): RunResult => {
      const ended: RunResult = {
        // Masked here, once, for every place a result goes: stdout, a teammate's
        // result message and the team file, spans (an endpoint's error may quote the key).
        result: redact(result),
        subtype,
        isError: subtype !== "success",
        turns: turn.turns,
        modelRetries: turn.retries,
        usage: turn.usage,
        durationMs: Math.round(performance.now() - started),
      };
      o.onTurnEnd?.({ key, result: ended });
      return ended;
    };
    // The budget is spent: the turn stops where it is and stays "started" in the
    // history, so the next runtime with budget left (`agent drain`) resumes it.
    const outOfBudget = (error: BudgetExceededError) => done("error_budget", error.message);

    // Tools that come and go (MCP servers') are settled once per turn: one that
    // dies mid-turn stays gone until the next.
    await o.tools.prepare?.(signal ?? new AbortController().signal);
    let step: Step = { next: "call_model" };
    for (;;) {
      if (signal?.aborted && step.next !== "finish") {
        // Stopped because another agent's call spent the session's budget: the turn
        // stays started, as when its own call is refused, for `agent drain` to resume.
        if (signal.reason instanceof BudgetExceededError) return outOfBudget(signal.reason);
        // Not finished: run again with the same key, the turn resumes.
        await o.history.interruptTurn(key, this.#clock.now());
        return done("error_interrupted", "interrupted before the turn finished");
      }
      if (step.next === "finish") {
        await o.history.finishTurn(key, this.#clock.now(), step.subtype, step.result);
        return done(step.subtype, step.result);
      }
      if (step.next === "run_tools") {
        step = await this.#runTools(step.calls, key, signal, step.cutOff);
        if (midTurn && !signal?.aborted) await this.#joinMidTurn(key, midTurn);
        continue;
      }
      if (turn.turns >= o.maxTurns) {
        step = { next: "finish", subtype: "error_max_turns", result: `stopped after ${o.maxTurns} model turns without a final answer; raise --max-turns to let it go on` };
        continue;
      }
      let response: ModelResponse;
      try {
        await this.#compactIfNeeded(false, signal, turn);
        const reminder = o.reminder?.();
        if (reminder) await this.#append([{ role: "user", content: reminder }]);
        turn.turns += 1;
        this.#emit({ type: "model_request", agent: this.identity, turn: turn.turns });
        response = await this.#callModel(signal, () => (turn.retries += 1));
        const { inputTokens, outputTokens } = response.usage;
        this.#emit({ type: "usage", agent: this.identity, inputTokens, outputTokens, finishReason: response.finishReason });
      } catch (error) {
        if (error instanceof ContextOverflowError && !turn.overflowRetried) {
          // Compact, then retry this model call once.
          turn.overflowRetried = true;
          try {
            await this.#compactIfNeeded(true, signal, turn);
          } catch (compactionError) {
            if (compactionError instanceof BudgetExceededError) return outOfBudget(compactionError);
            if (!(compactionError instanceof ModelError)) throw compactionError;
            step = { next: "finish", subtype: "error_model", result: compactionError.message };
          }
          continue;
        }
        // Before the abort check: the budget's stop aborts the run too, and this
        // turn must stay resumable rather than be marked interrupted.
        if (error instanceof BudgetExceededError) return outOfBudget(error);
        if (signal?.aborted) continue;
        if (error instanceof ModelRefusalError) {
          step = { next: "finish", subtype: "error_refusal", result: error.message };
          continue;
        }
        if (error instanceof ModelError) {
          // Never a silent empty success: the user is told, and the run fails.
          if (error instanceof EmptyModelAnswerError) this.#warn([error.message]);
          step = { next: "finish", subtype: "error_model", result: error.message };
          continue;
        }
        throw error;
      }
      turn.usage = addUsage(turn.usage, response.usage);
      step = await this.#afterReply(response, turn);
      if (step.next === "finish" && step.subtype === "success") {
        step = await this.#stopHook(step, key, turn, signal);
        // Sent back to work: the final answer is the one it gives next.
        if (step.next === "call_model") turn.text = "";
      }
    }
  }

  /**
   * Takes what came for this turn while it ran (up to MAX_MID_TURN_MESSAGES
   * at one step): each is written to the history joined to turn `key` (durably, as
   * an event joins a batched event turn), then acknowledged. A crash between the
   * two leaves it in the history and back in the mailbox; taken again, its id
   * is found in this turn and it is only acknowledged — delivered once. One in
   * the history as a turn of its own, unfinished or finished (its answer may
   * still be owed), is given back: that turn answers it.
   */
  async #joinMidTurn(key: string, source: MidTurnSource): Promise<void> {
    const history = this.#o.history;
    for (let taken = 0; taken < MAX_MID_TURN_MESSAGES; taken += 1) {
      const entry = await source.take();
      if (!entry) return;
      const { event, owner } = entry;
      const id = event.eventId;
      const status = history.turnStatus(id);
      const turn = history.turnOf(id);
      const answeredElsewhere = status === "finished" && turn !== id;
      if (status !== undefined && turn !== key && !answeredElsewhere) {
        // Given back, it is the next one taken: look again at the next step.
        await owner.release?.(event);
        return;
      }
      if (status === undefined) {
        try {
          await history.joinTurn(id, key, [{ role: "user", content: eventEnvelope(event) }], this.#clock.now());
        } catch (error) {
          await owner.release?.(event).catch(() => {});
          throw error;
        }
        this.#emit({ type: "event", agent: this.identity, eventId: id, source: event.source, sender: event.sender, kind: event.kind });
      }
      try {
        await owner.acknowledge(event);
      } catch (error) {
        // In the history already: taken again later, it is only acknowledged then.
        this.#warn([`acknowledging message ${id} failed (${(error as Error).message}); it will be retried`]);
        await owner.release?.(event).catch(() => {});
        return;
      }
    }
  }

  /**
   * Gives every tool call the history has no result for an error result, so a
   * resumed turn, or a new one after a turn the process died in, starts from a
   * history the model API accepts. The call may have run in part: the result says so.
   */
  async #pairUnansweredCalls(): Promise<void> {
    const unanswered = unansweredCalls(this.#o.history.messages);
    if (unanswered.length > 0) await this.#append(unanswered);
  }

  /** Whether the next model call would get a reminder first, so a call made ahead would not be its request. */
  #reminderDue(): boolean {
    const o = this.#o;
    return o.reminder !== undefined && (o.reminderDue?.() ?? true);
  }

  /**
   * An event turn's model request, sent once its events are durable in the
   * history and nothing else is expected to join them: it goes out while they
   * are acknowledged, and the turn takes its answer when it asks exactly that
   * request (AheadCall.fits). A turn that asks anything else (an event came
   * after all) aborts it. Not when something would come before the turn's call:
   * a reminder, a compaction, a call a crash left without its result.
   */
  #callAhead(): void {
    const o = this.#o;
    if (this.#ahead || this.#reminderDue()) return;
    const history = o.history.messages;
    if (unansweredCalls(history).length > 0 || o.history.size > o.compaction.thresholdChars) return;
    this.#ahead = (async () => {
      // As the turn does first: tools that come and go are settled before their specs are read.
      await o.tools.prepare?.(new AbortController().signal);
      return new AheadCall(o.model, { identity: this.identity, messages: [{ role: "system", content: o.systemPrompt }, ...o.history.messages], tools: o.tools.specs() });
    })();
  }


  /** Decides what follows a model reply, recording it in the history first. */
  async #afterReply(response: ModelResponse, turn: { continuations: number; text: string }): Promise<Step> {
    const message = response.message;
    const calls = message.toolCalls ?? [];
    // A reply is durable before anything acts on it (a crash must not run a write
    // twice, nor lose that it ran), except one whose calls all only read: the
    // results' append makes it durable with them, and a crash before that only
    // asks the model again. One fsync a reading step instead of two.
    const readsOnly = calls.length > 0 && calls.every((call) => this.#o.tools.readOnly?.(call) === true);
    // So is a last answer with no Stop hook to read it: the turn's end, written
    // next with nothing between, makes both durable at once.
    const stopHooked = this.#o.hooks.has?.(this.identity === LEAD ? "Stop" : "SubagentStop") ?? true;
    const endsTurn = calls.length === 0 && response.finishReason !== "length" && !stopHooked;
    await this.#append([message], readsOnly || endsTurn ? { durable: false } : undefined);
    if (message.content) this.#emit({ type: "assistant", agent: this.identity, text: message.content });
    if (calls.length > 0) {
      turn.text = "";
      for (const call of calls) {
        this.#emit({ type: "tool_call", agent: this.identity, id: call.id, name: call.name, arguments: call.arguments });
      }
      // Cut off by the output limit (the client has already asked once more with
      // a higher limit where the model allows one): the last call's arguments
      // are incomplete, the calls before it whole.
      return { next: "run_tools", calls, ...(response.finishReason === "length" ? { cutOff: calls.at(-1)!.id } : {}) };
    }
    turn.text += message.content ?? "";
    if (response.finishReason === "length" && turn.continuations < MAX_CONTINUATIONS) {
      turn.continuations += 1;
      await this.#append([{ role: "user", content: CONTINUE_PROMPT }]);
      return { next: "call_model" };
    }
    return { next: "finish", subtype: "success", result: turn.text };
  }

  /**
   * A Stop hook (SubagentStop for a teammate or a subagent) that exits 2 or
   * answers `decision: "block"` keeps the agent going, its reason given to the
   * model; `continue: false` lets it stop all the same. `stopHookActive` tells
   * the hook it already sent this turn back once, so it can let go.
   */
  async #stopHook(step: Step & { next: "finish" }, idempotencyKey: string, turn: { stopHookActive: boolean }, signal?: AbortSignal): Promise<Step> {
    const event = this.identity === LEAD ? "Stop" : "SubagentStop";
    const payload = this.#hookPayload(idempotencyKey, { result: step.result, stopHookActive: turn.stopHookActive });
    const outcome = await this.#o.hooks.run(event, payload, { workspace: this.#o.workspace, signal });
    this.#warn(outcome.warnings);
    if (!outcome.blocked || outcome.stopped !== undefined) return step;
    turn.stopHookActive = true;
    await this.#append([{ role: "user", content: `A Stop hook asked you to go on: ${outcome.blocked}` }]);
    return { next: "call_model" };
  }

  async #runTools(calls: ToolCall[], idempotencyKey: string, signal?: AbortSignal, cutOff?: string): Promise<Step> {
    const context = {
      identity: this.identity,
      idempotencyKey,
      workspace: this.#o.workspace,
      ...(this.#o.addDirs && this.#o.addDirs.length > 0 ? { addDirs: this.#o.addDirs } : {}),
      signal: signal ?? new AbortController().signal,
      ...(this.#o.fence ? { fence: this.#o.fence } : {}),
    };
    const concurrent = (call: ToolCall) => call.id !== cutOff && this.#o.tools.concurrent?.(call) === true;
    for (let at = 0; at < calls.length; ) {
      // Neighbouring calls that may run at once do (their results stored together, in
      // the calls' order); any other call runs alone.
      let end = at + 1;
      if (concurrent(calls[at]!)) while (end < calls.length && concurrent(calls[end]!)) end += 1;
      const group = calls.slice(at, end);
      at = end;
      // Every call gets a result, even when interrupted, so the history keeps
      // each call paired with its result.
      const results = await Promise.all(
        group.map((call) =>
          signal?.aborted
            ? { content: "interrupted before this tool ran", isError: true }
            : call.id === cutOff
              ? { content: cutOffCall(call), isError: true }
              : this.#o.tools.execute(call, { ...context, callId: call.id }),
        ),
      );
      await this.#append(
        group.map((call, i): ChatMessage => ({ role: "tool", toolCallId: call.id, content: results[i]!.content, ...(results[i]!.isError ? { isError: true } : {}) })),
      );
      for (const [i, call] of group.entries()) {
        const result = results[i]!;
        this.#emit({ type: "tool_result", agent: this.identity, id: call.id, name: call.name, content: result.content, isError: result.isError ?? false });
      }
    }
    return { next: "call_model" };
  }

  async #callModel(signal?: AbortSignal, retried?: () => void): Promise<ModelResponse> {
    // Masked over the joined stream: a key the model echoes may arrive split across deltas.
    const stream = new StreamRedactor();
    const text = (piece: string) => {
      if (piece !== "") this.#emit({ type: "assistant_delta", agent: this.identity, text: piece });
    };
    const onText = (piece: string) => text(stream.push(piece));
    const pieces = new AnswerPieces((event) => this.#emit({ ...event, agent: this.identity }));
    const onRetry = (info: ModelRetryInfo) => {
      retried?.();
      text(stream.end());
      pieces.end();
      this.#emit({ type: "model_retry", agent: this.identity, ...info });
    };
    const listener = { onText, onPiece: pieces.push, onRetry };
    const messages: ChatMessage[] = [{ role: "system", content: this.#o.systemPrompt }, ...this.#o.history.messages];
    const tools = this.#o.tools.specs();
    try {
      if (this.#ahead) {
        const ahead = await this.#ahead;
        this.#ahead = undefined;
        if (ahead?.fits(messages, tools)) return await ahead.take(signal, listener);
        ahead?.abandon();
      }
      return await this.#o.model.complete({ identity: this.identity, messages, tools, signal, ...listener });
    } finally {
      text(stream.end());
      pieces.end();
    }
  }

  async #compactIfNeeded(force: boolean, signal: AbortSignal | undefined, turn: { usage: Usage }, trigger: "auto" | "manual" = "auto"): Promise<number> {
    const o = this.#o;
    // Told before the model summarises (it cannot stop it): `manual` for /compact, `auto` past the threshold.
    if (force || o.history.size > o.compaction.thresholdChars) {
      const outcome = await o.hooks.run("PreCompact", { identity: this.identity, workspace: o.workspace, trigger }, { workspace: o.workspace, signal });
      this.#warn(outcome.warnings);
    }
    const result = await compact(
      o.history.messages,
      o.compaction,
      { model: o.model, identity: this.identity, systemPrompt: o.systemPrompt, signal },
      force,
      o.history.size,
    );
    if (!result) return 0;
    await o.history.snapshot(result.messages, this.#clock.now());
    turn.usage = addUsage(turn.usage, result.usage);
    this.#emit({
      type: "compaction",
      agent: this.identity,
      summarisedMessages: result.summarisedMessages,
      persistedResults: result.persistedResults,
    });
    return result.summarisedMessages;
  }

  #append(messages: ChatMessage[], options?: AppendOptions): Promise<void> {
    return this.#o.history.appendMessages(messages, this.#clock.now(), options);
  }

  /**
   * SessionStart, once per process, before the Lead's first prompt: `startup`
   * for a new session, `resume` for one with history. Returns what its hooks
   * add for the model.
   */
  async #sessionStart(idempotencyKey: string, signal?: AbortSignal): Promise<string[]> {
    if (this.#sessionStarted || this.identity !== LEAD) return [];
    this.#sessionStarted = true;
    const source = this.#o.history.messages.length === 0 ? "startup" : "resume";
    const outcome = await this.#o.hooks.run("SessionStart", this.#hookPayload(idempotencyKey, { source }), { workspace: this.#o.workspace, signal });
    this.#warn(outcome.warnings);
    return outcome.context ?? [];
  }

  #hookPayload(idempotencyKey: string, extra: Record<string, unknown>): Record<string, unknown> {
    return { identity: this.identity, idempotencyKey, workspace: this.#o.workspace, ...extra };
  }

  #warn(warnings: string[]): void {
    for (const message of warnings) this.#emit({ type: "warning", agent: this.identity, message });
  }

  #emit(event: RunEvent): void {
    this.#o.observer?.(event);
  }
}

/** Error results for the last model reply's calls the history has no result for (a process that died while they ran). */
function unansweredCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const answered = new Set<string>();
  const unanswered: ChatMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "tool") answered.add(message.toolCallId);
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) {
        if (!answered.has(call.id)) {
          unanswered.push({
            role: "tool",
            toolCallId: call.id,
            content: "this call did not finish: the process stopped while it ran; check its effects before repeating it",
            isError: true,
          });
        }
      }
      break;
    }
  }
  return unanswered;
}
