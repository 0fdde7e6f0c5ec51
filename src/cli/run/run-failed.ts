import { AgentError, type ErrorCategory } from "../../core/errors.ts";
import type { RunResult, RunSubtype } from "../../runtime/run-types.ts";

/**
 * A run that finished with an error subtype. Thrown by `agent run` after the
 * result is printed, so the entry reports it like any error: one line on stderr
 * and the exit code of its category — model failures 3, Ctrl-C 130, SIGTERM
 * 143, every other 1 — which keeps the exit code non-zero exactly when the
 * JSON says `is_error`.
 */
export class RunFailedError extends AgentError {
  readonly code = "RUN_FAILED";
  readonly category: ErrorCategory;

  constructor(
    readonly result: RunResult,
    /** The signal that stopped the run: its exit code is the shell's 128 + n (130 for Ctrl-C). */
    signal?: NodeJS.Signals,
  ) {
    super(`run ended with ${result.subtype}: ${result.result || "no detail given"}`);
    this.category =
      signal === "SIGINT" && result.subtype === "error_interrupted"
        ? "interrupted"
        : signal === "SIGTERM" && result.subtype === "error_interrupted"
          ? "terminated"
          : runErrorCategory(result.subtype);
    // Where it went wrong is in the run's events, not in this frame: --verbose
    // shows no stack for it.
    this.stack = `${this.name}: ${this.message}`;
  }
}

export function runErrorCategory(subtype: RunSubtype): ErrorCategory {
  return subtype === "error_model" || subtype === "error_refusal" ? "model" : "agent";
}
