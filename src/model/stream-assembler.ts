import { z } from "zod";
import type { ModelResponse, ToolCall } from "./types.ts";
import { InvalidCompletionError, WireUsage, assembled, firstBytes, generatedCallId, oneLine } from "./wire-completion.ts";

/**
 * One `chat.completion.chunk` of a streamed answer. Only the first choice is
 * read (we never ask for more); the usage comes in a last chunk with no
 * choices when `stream_options.include_usage` is set.
 */
const WireChunk = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
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
});

/** An `error` object sent inside the stream (OpenAI does so when a stream fails after it began). */
const WireStreamError = z.object({ error: z.object({ message: z.string().nullish() }).passthrough() });

/** The stream said it failed: retried like a cut stream. */
export class StreamErrorEventError extends Error {}

/** The stream ended before the answer's `finish_reason`. */
export class StreamCutError extends Error {}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Builds the whole answer from the chunks of a stream: text pieces joined (and
 * told to `onText` as they come), tool calls put together by their index, the
 * finish reason and the usage kept. `finish()` refuses a stream that never said
 * it finished (no finish reason, no [DONE]), so a cut answer never passes for a
 * whole one.
 */
export class StreamAssembler {
  readonly #onText: ((text: string) => void) | undefined;
  readonly #text: string[] = [];
  readonly #calls: PartialCall[] = [];
  #finishReason: string | undefined;
  #usage: z.infer<typeof WireUsage>;
  #chunks = 0;

  constructor(onText?: (text: string) => void) {
    this.#onText = onText;
  }

  /** One event's data, still JSON text. */
  push(data: string): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new InvalidCompletionError(`a stream event that is not JSON`, firstBytes(data));
    }
    const failed = WireStreamError.safeParse(json);
    if (failed.success) throw new StreamErrorEventError(oneLine(failed.data.error.message ?? JSON.stringify(failed.data.error)));
    const parsed = WireChunk.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
      throw new InvalidCompletionError(`a stream chunk that is not a completion chunk (${issue?.message}${where})`, firstBytes(data));
    }
    this.#chunks += 1;
    if (parsed.data.usage) this.#usage = parsed.data.usage;
    const choice = parsed.data.choices?.[0];
    if (!choice) return;
    const piece = choice.delta?.content ?? choice.delta?.refusal;
    if (piece) {
      this.#text.push(piece);
      this.#onText?.(piece);
    }
    for (const delta of choice.delta?.tool_calls ?? []) this.#toolCallDelta(delta);
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
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
    }));
    const text = this.#text.join("");
    return assembled(text === "" ? null : text, toolCalls, this.#finishReason, this.#usage);
  }

  #toolCallDelta(delta: { index?: number | null; id?: string | null; function?: { name?: string | null; arguments?: string | null } | null }): void {
    // Without an index (a few local servers), a delta with a new id starts a call and one without continues the last.
    const index = delta.index ?? (delta.id && this.#calls.at(-1)?.id !== delta.id ? this.#calls.length : Math.max(0, this.#calls.length - 1));
    const call = (this.#calls[index] ??= { id: "", name: "", arguments: "" });
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += call.name === delta.function.name ? "" : delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
  }
}
