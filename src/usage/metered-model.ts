import { BudgetExceededError } from "../core/errors.ts";
import type { ModelClient, ModelRequest, ModelResponse, Usage } from "../model/types.ts";
import type { Pricing } from "./pricing.ts";
import type { UsageLedger } from "./usage-ledger.ts";

export interface MeterOptions {
  ledger: UsageLedger;
  pricing: Pricing;
  /** No new model call starts once the session's spend has reached this (US dollars). */
  maxBudgetUsd?: number;
  /** Told once, when the first call is refused for the budget: the command stops the whole team. */
  onBudgetExhausted?: (error: BudgetExceededError) => void;
  /** Told as each call starts; the function returned is told how it ended (a trace span). */
  onCall?: (identity: string, model: string) => (outcome: { usage?: Usage; error?: unknown }) => void;
}

/**
 * The model client every agent of a runtime shares, with an account kept: each
 * answered call is written to the usage ledger under the agent who pays for it
 * (a task subagent, `lead/task-1`, bills the Lead), and with a budget, a call
 * is refused before it starts once the session has spent it.
 */
export class MeteredModelClient implements ModelClient {
  readonly #inner: ModelClient;
  readonly #o: MeterOptions;
  #exhausted = false;

  constructor(inner: ModelClient, options: MeterOptions) {
    this.#inner = inner;
    this.#o = options;
  }

  get model(): string {
    return this.#inner.model;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { ledger, pricing, maxBudgetUsd } = this.#o;
    if (maxBudgetUsd !== undefined) {
      const spent = ledger.spentUsd(pricing);
      if (spent >= maxBudgetUsd) {
        const error = new BudgetExceededError(spent, maxBudgetUsd);
        if (!this.#exhausted) {
          this.#exhausted = true;
          this.#o.onBudgetExhausted?.(error);
        }
        throw error;
      }
    }
    const started = performance.now();
    const ended = this.#o.onCall?.(request.identity, request.model ?? this.#inner.model);
    let response: ModelResponse;
    try {
      response = await this.#inner.complete(request);
    } catch (error) {
      ended?.({ error });
      throw error;
    }
    ended?.({ usage: response.usage });
    ledger.recordModelCall({
      agent: billedAgent(request.identity),
      identity: request.identity,
      model: request.model ?? this.#inner.model,
      usage: response.usage,
      toolCalls: response.message.toolCalls?.length ?? 0,
      durationMs: performance.now() - started,
    });
    return response;
  }

  /** True once a call was refused for the budget. */
  get budgetExhausted(): boolean {
    return this.#exhausted;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** `lead/task-1` is the Lead's subagent: the Lead pays. */
export function billedAgent(identity: string): string {
  return identity.split("/")[0] || identity;
}
