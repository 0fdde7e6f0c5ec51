import { z } from "zod";
import { type ProviderError, parseErrorBody } from "./error-body.ts";
import type { ChatProfile } from "./profiles/chat-profile.ts";
import type { AnswerPiece, ModelResponse, ToolCall, WireExtra } from "./types.ts";
import { InvalidCompletionError, WireContent, WireUsage, assembled, contentText, firstBytes, generatedCallId } from "./wire-completion.ts";
import { extraField, mergeExtras, messageExtras, toolCallExtras } from "./wire-extra.ts";
import { lazySchema } from "../core/lazy-schema.ts";
import { fastChunk } from "./chunk-shape.ts";

/**
 * One `chat.completion.chunk` of a streamed answer. Only the first choice is
 * read (we never ask for more); the usage comes in a last chunk with no
 * choices when `stream_options.include_usage` is set.
 */
export const WireChunk = lazySchema(() =>
  z.object({
    choices: z
      .array(
        z.object({
          // Loose: the fields beside the standard ones are kept for the profile to send back.
          delta: z
            .looseObject({
              content: WireContent,
              refusal: z.string().nullish(),
              tool_calls: z
                .array(
                  z.looseObject({
                    index: z.number().int().nonnegative().nullish(),
                    id: z.string().nullish(),
                    function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                  }),
                )
                .nullish(),
            })
            .nullish(),
          finish_reason: z.string().nullish(),
        }),
      )
      .nullish(),
    usage: WireUsage,
  }),
);

/**
 * The stream said it failed: an `error` event (Groq's `event: error`,
 * llama.cpp's `error:` line) or a chunk holding `error` (OpenAI's, OpenRouter's
 * beside a `finish_reason: "error"`). Not a cut stream: the endpoint answered.
 */
export class StreamErrorEventError extends Error {
  constructor(
    readonly error: ProviderError,
    /**
     * Whether text of the answer was already shown (told to `onText`) when it
     * came; undefined when the adapter does not say, and then it is never retried.
     */
    readonly afterText?: boolean,
  ) {
    super(error.message || "the stream reported an error");
  }
}

/** The stream ended before the answer's `finish_reason`. */
export class StreamCutError extends Error {}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
  extra: WireExtra;
}

type ToolCallDelta = {
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
  [key: string]: unknown;
};

/**
 * Builds the whole answer from the chunks of a stream: text pieces joined (and
 * told to `onText` as they come), tool calls put together by their index, the
 * finish reason and the usage kept. `finish()` refuses a stream that never said
 * it finished (no finish reason, no [DONE]), so a cut answer never passes for a
 * whole one.
 */
export class StreamAssembler {
  readonly #onText: ((text: string) => void) | undefined;
  readonly #onPiece: ((piece: AnswerPiece) => void) | undefined;
  readonly #text: string[] = [];
  readonly #calls: PartialCall[] = [];
  #finishReason: string | undefined;
  #usage: z.infer<typeof WireUsage>;
  readonly #extra: WireExtra = {};
  readonly #deltas: ChatProfile["toolCallDeltas"];
  #chunks = 0;

  constructor(onText?: (text: string) => void, toolCallDeltas: ChatProfile["toolCallDeltas"] = "index", onPiece?: (piece: AnswerPiece) => void) {
    this.#onText = onText;
    this.#deltas = toolCallDeltas;
    this.#onPiece = onPiece;
  }

  /** One event's data, still JSON text; `event` is the SSE event's name. */
  push(data: string, event = "message"): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      if (event === "error") throw new StreamErrorEventError({ message: firstBytes(data) });
      throw new InvalidCompletionError(`a stream event that is not JSON`, firstBytes(data));
    }
    if (event === "error" || (typeof json === "object" && json !== null && "error" in json && (json as { error: unknown }).error)) {
      throw new StreamErrorEventError(parseErrorBody(json) ?? { message: firstBytes(data) });
    }
    const chunk = fastChunk(json) ?? this.#parsed(json, data);
    this.#chunks += 1;
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta;
    if (!delta) {
      if (choice.finish_reason) this.#finishReason = choice.finish_reason;
      return;
    }
    const piece = contentText(delta.content) ?? delta.refusal;
    mergeExtras(this.#extra, messageExtras(delta));
    // DeepSeek's `reasoning_content`, OpenRouter's `reasoning`: the reasoning as it streams.
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") this.#onPiece?.({ kind: "thinking", text: reasoning });
    if (piece) {
      this.#text.push(piece);
      this.#onText?.(piece);
    }
    for (const call of delta.tool_calls ?? []) this.#toolCallDelta(call);
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
  }

  /** A chunk of an unusual shape, read by the schema, which names what is wrong with a bad one. */
  #parsed(json: unknown, data: string): z.infer<typeof WireChunk> {
    const parsed = WireChunk.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
      throw new InvalidCompletionError(`a stream chunk that is not a completion chunk (${issue?.message}${where})`, firstBytes(data));
    }
    return parsed.data;
  }

  /** Chunks read so far. */
  get chunks(): number {
    return this.#chunks;
  }

  /**
   * The whole answer. `done` says the stream ended with `data: [DONE]`: a few
   * local servers never send a finish reason, and their [DONE] still marks a
   * stream that ended as it meant to.
   */
  finish(done: boolean): ModelResponse {
    if (this.#finishReason === undefined && !done) {
      throw new StreamCutError(
        this.#chunks === 0 ? "the answer stream ended before its first chunk" : "the answer stream was cut before it finished",
      );
    }
    const calls = this.#calls.filter((call) => call !== undefined);
    const nameless = calls.find((call) => call.name === "");
    if (nameless) throw new InvalidCompletionError("a streamed tool call without a name", firstBytes(JSON.stringify(nameless)));
    const toolCalls: ToolCall[] = calls.map((call, index) => ({
      id: call.id || generatedCallId(index),
      name: call.name,
      // Some servers stream no argument text for a call that takes none.
      arguments: call.arguments === "" ? "{}" : call.arguments,
      ...extraField(call.extra),
    }));
    const text = this.#text.join("");
    return assembled(text === "" ? null : text, toolCalls, this.#finishReason, this.#usage, this.#extra);
  }

  #toolCallDelta(delta: ToolCallDelta): void {
    const index = this.#callIndex(delta);
    const starts = this.#calls[index] === undefined;
    const call = (this.#calls[index] ??= { id: "", name: "", arguments: "", extra: {} });
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += call.name === delta.function.name ? "" : delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
    mergeExtras(call.extra, toolCallExtras(delta));
    const json = delta.function?.arguments ?? "";
    if (starts || json !== "") this.#onPiece?.({ kind: "tool_input", index, id: call.id || generatedCallId(index), name: call.name, json });
  }

  /** Which call a delta belongs to, as the profile says calls are told apart. */
  #callIndex(delta: ToolCallDelta): number {
    const last = this.#calls.length - 1;
    // Gemini sends each parallel call whole, with no index and an empty id: a name starts a call.
    if (this.#deltas === "name-starts-call" && delta.function?.name) return this.#calls.length;
    if (this.#deltas === "name-starts-call" && delta.index == null) return Math.max(0, last);
    // Without an index (a few local servers), a delta with a new id starts a call and one without continues the last.
    return delta.index ?? (delta.id && this.#calls.at(-1)?.id !== delta.id ? this.#calls.length : Math.max(0, last));
  }
}
