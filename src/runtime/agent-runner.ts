import { type Clock, systemClock } from "../core/clock.ts";
import { ContextOverflowError, ModelError, UsageError } from "../core/errors.ts";
import type { Hooks } from "../hooks/types.ts";
import {
  addUsage,
  type ChatMessage,
  type ModelClient,
  type ModelResponse,
  type ToolCall,
  type Usage,
  ZERO_USAGE,
} from "../model/types.ts";
import { Mutex } from "../storage/process-mutex.ts";
import type { ToolExecutor } from "../tools/tool.ts";
import { type CompactionOptions, compact } from "./compaction.ts";
import type { HistoryStore } from "./history-store.ts";
import type { RunEvent, RunObserver, RunOptions, RunResult, RunSubtype } from "./run-types.ts";

export interface AgentRunnerOptions {
  /** The agent's name: its tools' identity and the X-Agent-Name of its model requests. */
  identity: string;
  model: ModelClient;
  tools: ToolExecutor;
  hooks: Hooks;
  history: HistoryStore;
  systemPrompt: string;
  workspace: string;
  maxTurns: number;
  compaction: CompactionOptions;
  observer?: RunObserver;
  clock?: Clock;
}

/** How many times a reply cut off by the output limit is continued before it is taken as it is. */
const MAX_CONTINUATIONS = 3;
const CONTINUE_PROMPT = "Your last reply was cut off by the output limit. Continue exactly where it stopped.";

/** The loop's next step; the run is a walk through these. */
type Step =
  | { next: "call_model" }
  | { next: "run_tools"; calls: ToolCall[] }
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

  constructor(options: AgentRunnerOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.#clock = options.clock ?? systemClock;
  }

  get history(): HistoryStore {
    return this.#o.history;
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
    this.#o.history.close();
  }

  async #runTurn(content: string, { idempotencyKey, signal }: RunOptions): Promise<RunResult> {
    const started = performance.now();
    const o = this.#o;
    const turn = { turns: 0, usage: ZERO_USAGE as Usage, continuations: 0, text: "", overflowRetried: false };
    const done = (subtype: RunSubtype, result: string): RunResult => ({
      result,
      subtype,
      isError: subtype !== "success",
      turns: turn.turns,
      usage: turn.usage,
      durationMs: Math.round(performance.now() - started),
    });

    const prompt = await o.hooks.run("UserPromptSubmit", this.#hookPayload(idempotencyKey, { prompt: content }), {
      workspace: o.workspace,
      signal,
    });
    this.#warn(prompt.warnings);
    if (prompt.blocked) return done("error_blocked", `prompt blocked by UserPromptSubmit hook: ${prompt.blocked}`);

    o.history.markTurn(idempotencyKey, "started", this.#clock.now());
    this.#append([{ role: "user", content }]);
    this.#emit({ type: "user", agent: this.identity, content });

    let step: Step = { next: "call_model" };
    for (;;) {
      if (signal?.aborted && step.next !== "finish") {
        step = { next: "finish", subtype: "error_interrupted", result: "interrupted before the turn finished" };
      }
      if (step.next === "finish") {
        o.history.markTurn(idempotencyKey, "finished", this.#clock.now(), step.subtype);
        return done(step.subtype, step.result);
      }
      if (step.next === "run_tools") {
        step = await this.#runTools(step.calls, idempotencyKey, signal);
        continue;
      }
      if (turn.turns >= o.maxTurns) {
        step = { next: "finish", subtype: "error_max_turns", result: `stopped after ${o.maxTurns} model turns without a final answer; raise --max-turns to let it go on` };
        continue;
      }
      let response: ModelResponse;
      try {
        await this.#compactIfNeeded(false, signal, turn);
        turn.turns += 1;
        this.#emit({ type: "model_request", agent: this.identity, turn: turn.turns });
        response = await this.#callModel(signal);
      } catch (error) {
        if (error instanceof ContextOverflowError && !turn.overflowRetried) {
          // Compact, then retry this model call once.
          turn.overflowRetried = true;
          try {
            await this.#compactIfNeeded(true, signal, turn);
          } catch (compactionError) {
            if (!(compactionError instanceof ModelError)) throw compactionError;
            step = { next: "finish", subtype: "error_model", result: compactionError.message };
          }
          continue;
        }
        if (signal?.aborted) continue;
        if (error instanceof ModelError) {
          step = { next: "finish", subtype: "error_model", result: error.message };
          continue;
        }
        throw error;
      }
      turn.usage = addUsage(turn.usage, response.usage);
      step = this.#afterReply(response, turn);
      if (step.next === "finish" && step.subtype === "success") {
        step = await this.#stopHook(step, idempotencyKey, signal);
        // Sent back to work: the final answer is the one it gives next.
        if (step.next === "call_model") turn.text = "";
      }
    }
  }

  /** Decides what follows a model reply, recording it in the history first. */
  #afterReply(response: ModelResponse, turn: { continuations: number; text: string }): Step {
    const message = response.message;
    this.#append([message]);
    if (message.content) this.#emit({ type: "assistant", agent: this.identity, text: message.content });
    const calls = message.toolCalls ?? [];
    if (calls.length > 0) {
      turn.text = "";
      for (const call of calls) {
        this.#emit({ type: "tool_call", agent: this.identity, id: call.id, name: call.name, arguments: call.arguments });
      }
      return { next: "run_tools", calls };
    }
    turn.text += message.content ?? "";
    if (response.finishReason === "length" && turn.continuations < MAX_CONTINUATIONS) {
      turn.continuations += 1;
      this.#append([{ role: "user", content: CONTINUE_PROMPT }]);
      return { next: "call_model" };
    }
    return { next: "finish", subtype: "success", result: turn.text };
  }

  /** A Stop hook that exits 2 keeps the agent going, its reason given to the model. */
  async #stopHook(step: Step & { next: "finish" }, idempotencyKey: string, signal?: AbortSignal): Promise<Step> {
    const outcome = await this.#o.hooks.run("Stop", this.#hookPayload(idempotencyKey, { result: step.result }), {
      workspace: this.#o.workspace,
      signal,
    });
    this.#warn(outcome.warnings);
    if (!outcome.blocked) return step;
    this.#append([{ role: "user", content: `A Stop hook asked you to go on: ${outcome.blocked}` }]);
    return { next: "call_model" };
  }

  async #runTools(calls: ToolCall[], idempotencyKey: string, signal?: AbortSignal): Promise<Step> {
    const context = {
      identity: this.identity,
      idempotencyKey,
      workspace: this.#o.workspace,
      signal: signal ?? new AbortController().signal,
    };
    for (const call of calls) {
      // Every call gets a result, even when interrupted, so the history keeps
      // each call paired with its result.
      const result = signal?.aborted
        ? { content: "interrupted before this tool ran", isError: true }
        : await this.#o.tools.execute(call, context);
      const message: ChatMessage = { role: "tool", toolCallId: call.id, content: result.content, ...(result.isError ? { isError: true } : {}) };
      this.#append([message]);
      this.#emit({ type: "tool_result", agent: this.identity, id: call.id, name: call.name, content: result.content, isError: result.isError ?? false });
    }
    return { next: "call_model" };
  }

  async #callModel(signal?: AbortSignal): Promise<ModelResponse> {
    return this.#o.model.complete({
      identity: this.identity,
      messages: [{ role: "system", content: this.#o.systemPrompt }, ...this.#o.history.messages],
      tools: this.#o.tools.specs(),
      signal,
    });
  }

  async #compactIfNeeded(force: boolean, signal: AbortSignal | undefined, turn: { usage: Usage }): Promise<void> {
    const o = this.#o;
    const result = await compact(
      o.history.messages,
      o.compaction,
      { model: o.model, identity: this.identity, systemPrompt: o.systemPrompt, signal },
      force,
    );
    if (!result) return;
    o.history.snapshot(result.messages, this.#clock.now());
    turn.usage = addUsage(turn.usage, result.usage);
    this.#emit({
      type: "compaction",
      agent: this.identity,
      summarisedMessages: result.summarisedMessages,
      persistedResults: result.persistedResults,
    });
  }

  #append(messages: ChatMessage[]): void {
    this.#o.history.appendMessages(messages, this.#clock.now());
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
