import type { FinishReason, Usage } from "../model/types.ts";
import type { MidTurnSource } from "./event-inbox.ts";

/** How a run ended. Every subtype but "success" is an error (non-zero exit). */
export const RUN_SUBTYPES = [
  "success",
  "error_max_turns", // the turn cap was reached before a final answer
  "error_model", // the model endpoint failed after every retry
  "error_blocked", // a UserPromptSubmit hook refused the prompt
  "error_interrupted", // cancelled (signal, --timeout)
  "error_budget", // the session's spend reached --max-budget-usd; the unfinished turn waits for drain
  "error_max_structured_output_retries", // the final answer did not match --json-schema, even after one corrective turn (claude -p's name)
  "error_refusal", // the model refused to answer (Anthropic's stop_reason "refusal"); never asked twice
] as const;
export type RunSubtype = (typeof RUN_SUBTYPES)[number];

export interface RunResult {
  /** The final assistant text (or, for an error, what went wrong in one line). */
  result: string;
  subtype: RunSubtype;
  isError: boolean;
  /** Model calls made in this run. */
  turns: number;
  /** Model requests asked again after a transient failure (a 529, a cut stream, overloaded inside a stream). */
  modelRetries?: number;
  usage: Usage;
  durationMs: number;
}

/** What a run reports as it goes, for progress on stderr and `--output stream-json`. */
export type RunEvent =
  | { type: "user"; agent: string; content: string }
  | { type: "event"; agent: string; eventId: string; source: string; sender: string; kind: string }
  /** An event turn about to answer its batch (one or more `event`s before it): one line on stderr, not one per event. */
  | { type: "event_turn"; agent: string; events: { sender: string; kind: string }[] }
  | { type: "assistant"; agent: string; text: string }
  /** A piece of an answer as it streams in; a `model_retry` of the same agent voids the pieces before it. */
  | { type: "assistant_delta"; agent: string; text: string }
  /** A piece of a tool call's input JSON as it streams in (`index`: the call's place in the answer; the first piece may be empty); voided by a `model_retry` like text. */
  | { type: "tool_input_delta"; agent: string; index: number; id: string; name: string; json: string }
  /** A piece of the model's reasoning as it streams in, where the endpoint sends it. */
  | { type: "thinking_delta"; agent: string; text: string }
  | { type: "tool_call"; agent: string; id: string; name: string; arguments: string }
  | { type: "tool_result"; agent: string; id: string; name: string; content: string; isError: boolean }
  | { type: "model_request"; agent: string; turn: number }
  /** The tokens one model answer cost, once it is whole, and why it ended (for the terminal's team view and Claude's partial messages). */
  | { type: "usage"; agent: string; inputTokens: number; outputTokens: number; finishReason: FinishReason }
  | { type: "model_retry"; agent: string; attempt: number; delayMs: number; reason: string }
  | { type: "compaction"; agent: string; summarisedMessages: number; persistedResults: number }
  | { type: "warning"; agent: string; message: string }
  | { type: "todos"; agent: string; todos: { content: string; status: string }[] };

export type RunObserver = (event: RunEvent) => void;

export interface RunOptions {
  /** Stable key of this turn, passed to every tool call; refused when empty. */
  idempotencyKey: string;
  signal?: AbortSignal;
  /** Called once the user turn is in the history (durable, unless `promptKept`), before the model is asked. */
  onAccepted?: () => void;
  /** Looked at between the turn's steps: what it gives joins this turn (see AgentRunner#joinMidTurn). */
  midTurn?: MidTurnSource;
  /**
   * The prompt is kept durably elsewhere until the turn is over (a teammate's
   * message stays in processing/ until its ack): the turn's start need not be
   * fsynced before the model is asked — a crash brings the message back, and the
   * first step that acts makes the start durable with it.
   */
  promptKept?: boolean;
}
