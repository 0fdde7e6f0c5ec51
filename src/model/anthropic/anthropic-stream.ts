import { parseErrorBody } from "../error-body.ts";
import { StreamCutError, StreamErrorEventError } from "../stream-assembler.ts";
import type { AnswerPiece, FinishReason, ModelResponse, ToolCall, Usage } from "../types.ts";
import { EmptyCompletionError, InvalidCompletionError, firstBytes, oneLine } from "../wire-completion.ts";
import { ModelRefusalError } from "../../core/errors.ts";
import { ORDER_EXTRA, THINKING_EXTRA } from "./anthropic-request.ts";

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const num = (value: unknown): number => (typeof value === "number" && value > 0 ? Math.trunc(value) : 0);

/** One content block as it streams in: text, a tool call's input JSON, or thinking with its signature. */
interface PartialBlock {
  type: string;
  text: string;
  /** tool_use */
  id?: string;
  name?: string;
  /** thinking: the signature the API checks when the block is sent back; redacted_thinking: its data. */
  signature?: string;
  data?: string;
}

/**
 * Builds the whole answer from an Anthropic Messages event stream:
 * `message_start` (input usage), content blocks started, grown by deltas and
 * stopped, `message_delta` (stop reason, output usage), `message_stop`. An
 * `error` event is the endpoint's own error; a stream without `message_stop`
 * was cut.
 */
export class AnthropicStreamAssembler {
  readonly #onText: ((text: string) => void) | undefined;
  readonly #onPiece: ((piece: AnswerPiece) => void) | undefined;
  readonly #model: string;
  readonly #blocks: PartialBlock[] = [];
  #stopReason: string | undefined;
  #stopDetails: Json | undefined;
  #stopped = false;
  #events = 0;
  /** Text of the answer was told to `onText`: an error after it is not retried (the user saw it). */
  #shown = false;
  #usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheReported: false };

  constructor(onText?: (text: string) => void, model = "", onPiece?: (piece: AnswerPiece) => void) {
    this.#onText = onText;
    this.#model = model;
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
    if (!isObject(json) || typeof json.type !== "string") throw new InvalidCompletionError("a stream event that is not a Messages event", firstBytes(data));
    this.#events += 1;
    switch (json.type) {
      case "error":
        throw new StreamErrorEventError(parseErrorBody(json) ?? { message: firstBytes(data) }, this.#shown);
      case "message_start":
        if (isObject(json.message)) this.#addUsage(json.message.usage);
        return;
      case "content_block_start":
        this.#start(json);
        return;
      case "content_block_delta":
        this.#delta(json);
        return;
      case "message_delta":
        if (isObject(json.delta) && typeof json.delta.stop_reason === "string") this.#stopReason = json.delta.stop_reason;
        if (isObject(json.delta) && isObject(json.delta.stop_details)) this.#stopDetails = json.delta.stop_details;
        this.#addUsage(json.usage);
        return;
      case "message_stop":
        this.#stopped = true;
        return;
      default:
        // ping, content_block_stop, and event types added later.
        return;
    }
  }

  finish(): ModelResponse {
    if (!this.#stopped) {
      throw new StreamCutError(this.#events === 0 ? "the answer stream ended before its first event" : "the answer stream was cut before it finished");
    }
    const blocks = this.#blocks.filter((block) => block !== undefined);
    const text = blocks.filter((block) => block.type === "text").map((block) => block.text).join("");
    // Before the empty check: an empty refusal is a refusal, not an answer to ask for again.
    if (this.#stopReason === "refusal") throw refusalError(this.#model, text, this.#stopDetails);
    const toolCalls: ToolCall[] = blocks
      .filter((block) => block.type === "tool_use")
      .map((block) => ({ id: block.id ?? "", name: block.name ?? "", arguments: block.text === "" ? "{}" : block.text }));
    const nameless = toolCalls.find((call) => call.id === "" || call.name === "");
    if (nameless) throw new InvalidCompletionError("a tool_use block without an id or a name", firstBytes(JSON.stringify(nameless)));
    const thinking = blocks.flatMap((block): Json[] => {
      if (block.type === "thinking") return [{ type: "thinking", thinking: block.text, signature: block.signature ?? "" }];
      if (block.type === "redacted_thinking") return [{ type: "redacted_thinking", data: block.data ?? "" }];
      return [];
    });
    if (toolCalls.length === 0 && text.trim() === "") throw new EmptyCompletionError("an empty answer");
    const order = blockOrder(blocks);
    const extra = { ...(thinking.length > 0 ? { [THINKING_EXTRA]: thinking } : {}), ...(order ? { [ORDER_EXTRA]: order } : {}) };
    return {
      message: {
        role: "assistant",
        content: text === "" ? null : text,
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
        ...(Object.keys(extra).length > 0 ? { extra } : {}),
      },
      finishReason: finishReason(this.#stopReason, toolCalls.length > 0),
      usage: this.#totalUsage(),
    };
  }

  #start(event: Json): void {
    const block = event.content_block;
    if (typeof event.index !== "number" || !isObject(block) || typeof block.type !== "string") return;
    const started: PartialBlock = { type: block.type, text: "" };
    if (block.type === "text" && typeof block.text === "string") started.text = block.text;
    if (block.type === "thinking" && typeof block.thinking === "string") started.text = block.thinking;
    if (typeof block.signature === "string") started.signature = block.signature;
    if (typeof block.data === "string") started.data = block.data;
    if (typeof block.id === "string") started.id = block.id;
    if (typeof block.name === "string") started.name = block.name;
    this.#blocks[event.index] = started;
    if (started.type === "text" && started.text) this.#tell(started.text);
    if (started.type === "tool_use") this.#toolInput(started, "");
    if (started.type === "thinking" && started.text) this.#onPiece?.({ kind: "thinking", text: started.text });
  }

  #delta(event: Json): void {
    const delta = event.delta;
    const block = typeof event.index === "number" ? this.#blocks[event.index] : undefined;
    if (!block || !isObject(delta)) return;
    switch (delta.type) {
      case "text_delta":
        if (typeof delta.text === "string") {
          block.text += delta.text;
          this.#tell(delta.text);
        }
        return;
      case "input_json_delta":
        if (typeof delta.partial_json === "string") {
          block.text += delta.partial_json;
          if (delta.partial_json !== "") this.#toolInput(block, delta.partial_json);
        }
        return;
      case "thinking_delta":
        if (typeof delta.thinking === "string") {
          block.text += delta.thinking;
          if (delta.thinking !== "") this.#onPiece?.({ kind: "thinking", text: delta.thinking });
        }
        return;
      case "signature_delta":
        if (typeof delta.signature === "string") block.signature = (block.signature ?? "") + delta.signature;
        return;
    }
  }

  /** A tool_use block's input piece, the block's place among the answer's tool calls as its index. */
  #toolInput(block: PartialBlock, json: string): void {
    const index = this.#blocks.filter((candidate) => candidate?.type === "tool_use").indexOf(block);
    this.#onPiece?.({ kind: "tool_input", index, id: block.id ?? "", name: block.name ?? "", json });
  }

  #tell(text: string): void {
    if (text !== "") this.#shown = true;
    this.#onText?.(text);
  }

  /** message_start carries the input side; message_delta the output so far (cumulative), sometimes the input again. */
  #addUsage(usage: unknown): void {
    if (!isObject(usage)) return;
    const u = this.#usage;
    if (usage.input_tokens !== undefined) u.input = Math.max(u.input, num(usage.input_tokens));
    if (usage.output_tokens !== undefined) u.output = Math.max(u.output, num(usage.output_tokens));
    if (usage.cache_read_input_tokens !== undefined || usage.cache_creation_input_tokens !== undefined) u.cacheReported = true;
    u.cacheRead = Math.max(u.cacheRead, num(usage.cache_read_input_tokens));
    u.cacheWrite = Math.max(u.cacheWrite, num(usage.cache_creation_input_tokens));
  }

  /**
   * Anthropic's `input_tokens` leaves out what was read from or written to the
   * cache; ours counts every input token, the cached ones (read) among them.
   */
  #totalUsage(): Usage {
    const u = this.#usage;
    return {
      inputTokens: u.input + u.cacheRead + u.cacheWrite,
      outputTokens: u.output,
      ...(u.cacheReported ? { cachedInputTokens: u.cacheRead } : {}),
      ...(u.cacheWrite > 0 ? { cacheWriteInputTokens: u.cacheWrite } : {}),
    };
  }
}

/**
 * The order of an answer's blocks, for ORDER_EXTRA; none when it is the one the
 * request rebuilds without it: thinking first, then text, then the calls.
 */
function blockOrder(blocks: PartialBlock[]): Array<string | number> | undefined {
  const kept = blocks.filter((block) => ["thinking", "redacted_thinking", "text", "tool_use"].includes(block.type));
  const rank = (block: PartialBlock) => (block.type === "tool_use" ? 2 : block.type === "text" ? 1 : 0);
  if (kept.every((block, i) => i === 0 || rank(kept[i - 1]!) <= rank(block))) return undefined;
  return kept.map((block) => (block.type === "text" ? block.text.length : block.type === "tool_use" ? "tool_use" : "thinking"));
}

/** The run's error for a refusal: the classifier's explanation, and what was written before it. */
function refusalError(model: string, text: string, details: Json | undefined): ModelRefusalError {
  const explanation = typeof details?.explanation === "string" ? details.explanation : "stop_reason refusal";
  const why = typeof details?.category === "string" ? `${details.category}: ${explanation}` : explanation;
  const written = text.trim() === "" ? "" : ` after writing ${JSON.stringify(oneLine(text, 200))}`;
  return new ModelRefusalError(`the model ${model || "(unnamed)"} refused to answer (${why})${written}: rephrase the request, or start a new session without it`);
}

function finishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return hasToolCalls ? "tool_calls" : "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return hasToolCalls ? "tool_calls" : "other";
  }
}
