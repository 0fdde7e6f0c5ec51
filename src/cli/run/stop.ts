import { AgentRunError, BudgetExceededError } from "../../core/errors.ts";

/**
 * Why and when `agent run` stops early: `--timeout` (measured from the start of
 * the command, waiting for the lock included), SIGINT or SIGTERM, or a lost lock.
 * The reason is an AgentRunError so that anything rethrowing it reports a clean
 * agent failure (exit 1), never an internal error.
 */
export class RunStop implements Disposable {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  /** Epoch ms of the --timeout, if any. */
  readonly deadline: number | undefined;

  constructor(timeout: { ms: number; text: string } | undefined) {
    this.deadline = timeout === undefined ? undefined : Date.now() + timeout.ms;
    this.#timer = timeout === undefined ? undefined : setTimeout(() => this.abort(`timed out (--timeout ${timeout.text})`), timeout.ms);
    // Once: if the first Ctrl-C does not end the run, a second one kills the process the default way.
    process.once("SIGINT", this.#onSignal);
    process.once("SIGTERM", this.#onSignal);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** What stopped the run, in words, or undefined when nothing did. */
  get reason(): string | undefined {
    const reason: unknown = this.#controller.signal.reason;
    return this.#controller.signal.aborted && (reason instanceof AgentRunError || reason instanceof BudgetExceededError) ? reason.message : undefined;
  }

  /** How long a wait may last before the deadline: forever without --timeout. */
  remainingMs(): number {
    return this.deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, this.deadline - Date.now());
  }

  /** `why` in words, or the session's budget spent (turns then stay resumable by `agent drain`, as when their own call is refused). */
  abort(why: string | BudgetExceededError): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(typeof why === "string" ? new AgentRunError(why) : why);
  }

  [Symbol.dispose](): void {
    clearTimeout(this.#timer);
    process.off("SIGINT", this.#onSignal);
    process.off("SIGTERM", this.#onSignal);
  }

  /** The signal that stopped the run, if one did (and was the first reason to stop). */
  get signalName(): NodeJS.Signals | undefined {
    return this.#signal;
  }

  #signal: NodeJS.Signals | undefined;

  readonly #onSignal = (signal: NodeJS.Signals) => {
    if (!this.#controller.signal.aborted) this.#signal = signal;
    this.abort(`interrupted by ${signal}`);
  };
}
