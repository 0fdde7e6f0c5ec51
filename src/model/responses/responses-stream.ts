import { parseErrorBody } from "../error-body.ts";
import { StreamCutError, StreamErrorEventError } from "../stream-assembler.ts";
import type { AnswerPiece, FinishReason, ModelResponse, ToolCall, Usage } from "../types.ts";
import { EmptyCompletionError, InvalidCompletionError, firstBytes } from "../wire-completion.ts";
import { REASONING_EXTRA } from "./responses-request.ts";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const count = (value: unknown): number => (typeof value === "number" && value > 0 ? Math.trunc(value) : 0);

/**
 * Builds the whole answer from a Responses event stream: text deltas told as
 * they come, each output item taken whole from its `response.output_item.done`
 * (a function call with its call id, name and arguments; a reasoning item with
 * its encrypted content), the status and usage from the `response.completed`
 * (or `.incomplete`) that ends it. `error` and `response.failed` are the
 * endpoint's own errors; a stream without an end event was cut.
 */
export class ResponsesStreamAssembler {
  readonly #onText: ((text: string) => void) | undefined;
  readonly #onPiece: ((piece: AnswerPiece) => void) | undefined;
  /** The function calls begun so far, by output index: their place among the answer's calls, id and name. */
  readonly #calls = new Map<number, { index: number; id: string; name: string }>();
  /** Items by output index, as `output_item.done` gave them. */
  readonly #items: Json[] = [];
  #final: Json | undefined;
  #events = 0;
  /** Text of the answer was told to `onText`: an error after it is not retried (the user saw it). */
  #shown = false;

  constructor(onText?: (text: string) => void, onPiece?: (piece: AnswerPiece) => void) {
    this.#onText = onText;
    this.#onPiece = onPiece;
  }

  get events(): number {
    return this.#events;
  }

  push(data: string, event: string): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (event === "error") throw new StreamErrorEventError({ message: firstBytes(data) }, this.#shown);
      throw new InvalidCompletionError("a stream event that is not JSON", firstBytes(data));
    }
    if (!isObject(json) || typeof json.type !== "string") throw new InvalidCompletionError("a stream event that is not a Responses event", firstBytes(data));
    this.#events += 1;
    switch (json.type) {
      case "error":
        // `{"type":"error","code":…,"message":…}`, or the error nested under `error`.
        throw new StreamErrorEventError(parseErrorBody(isObject(json.error) ? json : { error: json }) ?? { message: firstBytes(data) }, this.#shown);
      case "response.failed": {
        const failed = isObject(json.response) ? json.response.error : undefined;
        throw new StreamErrorEventError(parseErrorBody({ error: failed ?? { message: "the response failed" } }) ?? { message: "the response failed" }, this.#shown);
      }
      case "response.output_text.delta":
        if (typeof json.delta === "string" && json.delta !== "") {
          this.#shown = true;
          this.#onText?.(json.delta);
        }
        return;
      case "response.output_item.added":
        if (typeof json.output_index === "number" && isObject(json.item) && json.item.type === "function_call") {
          const call = { index: this.#calls.size, id: String(json.item.call_id ?? ""), name: String(json.item.name ?? "") };
          this.#calls.set(json.output_index, call);
          this.#onPiece?.({ kind: "tool_input", ...call, json: "" });
        }
        return;
      case "response.function_call_arguments.delta": {
        const call = typeof json.output_index === "number" ? this.#calls.get(json.output_index) : undefined;
        if (call && typeof json.delta === "string" && json.delta !== "") this.#onPiece?.({ kind: "tool_input", ...call, json: json.delta });
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (typeof json.delta === "string" && json.delta !== "") this.#onPiece?.({ kind: "thinking", text: json.delta });
        return;
      case "response.output_item.done":
        if (typeof json.output_index === "number" && isObject(json.item)) this.#items[json.output_index] = json.item;
        return;
      case "response.completed":
      case "response.incomplete":
        if (isObject(json.response)) this.#final = json.response;
        return;
      default:
        return;
    }
  }

  finish(): ModelResponse {
    const final = this.#final;
    if (final === undefined) {
      throw new StreamCutError(this.#events === 0 ? "the answer stream ended before its first event" : "the answer stream was cut before it finished");
    }
    // The end event's own list when it has one; the items streamed otherwise.
    const items = Array.isArray(final.output) && final.output.length > 0 ? final.output.filter(isObject) : this.#items.filter(isObject);
    const text = items
      .filter((item) => item.type === "message" && Array.isArray(item.content))
      .flatMap((item) => (item.content as unknown[]).filter(isObject))
      .map((part) => (part.type === "output_text" && typeof part.text === "string" ? part.text : part.type === "refusal" && typeof part.refusal === "string" ? part.refusal : ""))
      .join("");
    const toolCalls: ToolCall[] = items
      .filter((item) => item.type === "function_call")
      .map((item) => ({
        id: typeof item.call_id === "string" ? item.call_id : "",
        name: typeof item.name === "string" ? item.name : "",
        arguments: typeof item.arguments === "string" && item.arguments !== "" ? item.arguments : "{}",
      }));
    const nameless = toolCalls.find((call) => call.id === "" || call.name === "");
    if (nameless) throw new InvalidCompletionError("a function_call item without a call_id or a name", firstBytes(JSON.stringify(nameless)));
    const reasoning = items.filter((item) => item.type === "reasoning").map(({ status: _status, ...item }) => item);
    if (toolCalls.length === 0 && text.trim() === "") throw new EmptyCompletionError("an empty answer");
    return {
      message: {
        role: "assistant",
        content: text === "" ? null : text,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(reasoning.length > 0 ? { extra: { [REASONING_EXTRA]: reasoning } } : {}),
      },
      finishReason: finishReason(final, toolCalls.length > 0),
      usage: usage(final.usage),
    };
  }
}

function finishReason(final: Json, hasToolCalls: boolean): FinishReason {
  if (final.status === "incomplete") {
    const reason = isObject(final.incomplete_details) ? final.incomplete_details.reason : undefined;
    return reason === "content_filter" ? "content_filter" : "length";
  }
  return hasToolCalls ? "tool_calls" : "stop";
}

/** `input_tokens` counts the cached ones too (`input_tokens_details.cached_tokens`), as ours does. */
function usage(wire: unknown): Usage {
  if (!isObject(wire)) return { inputTokens: 0, outputTokens: 0 };
  const details = wire.input_tokens_details;
  const cached = isObject(details) && typeof details.cached_tokens === "number" ? { cachedInputTokens: count(details.cached_tokens) } : {};
  return { inputTokens: count(wire.input_tokens), outputTokens: count(wire.output_tokens), ...cached };
}
