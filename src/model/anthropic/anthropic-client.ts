import { callSignal } from "../call-signal.ts";
import { describeFetchFailure } from "../fetch-failures.ts";
import { postForAnswer } from "../timed-post.ts";
import { completeWithinOutputLimit } from "../output-limit.ts";
import { DEFAULT_RETRY_TIMING, realRetryDeps, type RetryDeps, type RetryInfo, type RetryTiming, withRetries } from "../retry.ts";
import { readSse } from "../sse.ts";
import type { ModelClient, ModelRequest, ModelResponse } from "../types.ts";
import { InvalidCompletionError, firstBytes } from "../wire-completion.ts";
import { ANTHROPIC_DEFAULT_BASE_URL, anthropicUrl, authHeaders } from "../providers/endpoints.ts";
import { AnthropicBodyEncoder } from "./anthropic-body.ts";
import { AnthropicStreamAssembler } from "./anthropic-stream.ts";

/**
 * The Anthropic Messages adapter: our own fetch and SSE reading rather than
 * @anthropic-ai/sdk (docs/models.md says why). Every request streams; the
 * retry loop, the error classification and the output-limit retry are the
 * ones the other adapters use.
 */
/** The answer cap for a model the catalogue does not know. */
const UNKNOWN_MODEL_CAP = 8192;
/** The answer cap for a known one: its own limit, at most this (a long answer costs while it runs). */
const KNOWN_MODEL_CAP = 32_000;

export interface AnthropicModelClientOptions {
  model: string;
  apiKey: string;
  /** The API root (https://api.anthropic.com, or one ending in /v1); requests go to its /v1/messages. */
  baseUrl?: string;
  /** Sent with every request; ours (the key, the version, X-Agent-Name) win over a header of the same name. */
  headers?: Record<string, string>;
  timeoutMs: number;
  maxRetries?: number;
  onRetry?: (info: RetryInfo) => void;
  retryTiming?: Partial<RetryTiming>;
  retryDeps?: Partial<RetryDeps>;
  /** The most output tokens a model may write, when the catalogue knows. */
  maxOutputTokens?: (model: string) => number | undefined;
  /** Whether a model thinks (the catalogue's `reasoning`): extended thinking is asked for then. */
  reasons?: (model: string) => boolean;
  /** Whether a model takes thinking in the adaptive form only (the catalogue's `thinking: "adaptive"`). */
  adaptive?: (model: string) => boolean;
}

export class AnthropicModelClient implements ModelClient {
  readonly model: string;
  readonly endpoint: string;
  readonly #url: string;
  readonly #options: AnthropicModelClientOptions;
  readonly #timing: RetryTiming;
  readonly #deps: RetryDeps;
  readonly #closing = new AbortController();
  /** Kept for the client's life: a step encodes only its new messages (see AnthropicBodyEncoder). */
  readonly #encoder = new AnthropicBodyEncoder();

  constructor(options: AnthropicModelClientOptions) {
    this.model = options.model;
    this.endpoint = options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL;
    this.#url = anthropicUrl(this.endpoint, "messages");
    this.#options = options;
    this.#timing = { ...DEFAULT_RETRY_TIMING, ...options.retryTiming, ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }) };
    this.#deps = { ...realRetryDeps, ...options.retryDeps };
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model ?? this.model;
    const limit = this.#options.maxOutputTokens?.(model);
    const cap = limit === undefined ? UNKNOWN_MODEL_CAP : Math.min(limit, KNOWN_MODEL_CAP);
    return completeWithinOutputLimit(request, limit !== undefined && limit > cap ? limit : undefined, this.#options.onRetry, (maxTokens) =>
      this.#complete(request, model, maxTokens ?? cap),
    );
  }

  async #complete(request: ModelRequest, model: string, maxTokens: number): Promise<ModelResponse> {
    // One signal a call, let go of when it ends (see call-signal.ts).
    const call = callSignal(request.signal, this.#closing.signal);
    const signal = call.signal;
    const body = this.#encoder.encode(
      { model, messages: request.messages, tools: request.tools, maxTokens, thinking: this.#options.reasons?.(model) ?? false, adaptive: this.#options.adaptive?.(model) ?? false },
      { stream: true },
    );
    try {
      return await withRetries(
        () => this.#attempt(body, request, model, signal),
        (error) => describeFetchFailure(error, signal),
        {
          endpoint: this.endpoint,
          model,
          timeoutMs: this.#options.timeoutMs,
          keyVariable: "ANTHROPIC_API_KEY",
          requestUrl: this.#url,
          timing: this.#timing,
          deps: this.#deps,
          signal,
          onRetry: request.onRetry ?? this.#options.onRetry,
        },
      );
    } finally {
      call.release();
    }
  }

  async #attempt(body: Blob, request: ModelRequest, model: string, signal: AbortSignal): Promise<ModelResponse> {
    // The timeout covers the wait for the answer's headers; the stream then has an idle limit of the same length.
    const headers = {
      ...this.#options.headers,
      "content-type": "application/json",
      accept: "text/event-stream",
      ...authHeaders("anthropic", this.#options.apiKey),
      "X-Agent-Name": request.identity,
    };
    const response = await postForAnswer(this.#url, headers, body, signal, this.#options.timeoutMs);
    const assembler = new AnthropicStreamAssembler(request.onText, model, request.onPiece);
    const type = response.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream") || !response.body) {
      // A proxy that ignores `stream`: a whole message is read as its events would have said it.
      for (const event of wholeMessageEvents(await response.text())) assembler.push(JSON.stringify(event), event.type as string);
      return assembler.finish();
    }
    let prefix = "";
    for await (const event of readSse(response.body, { idleMs: this.#options.timeoutMs, onPrefix: (text) => (prefix = text) })) {
      assembler.push(event.data, event.event);
    }
    if (assembler.events === 0 && prefix.trim() !== "" && !/^(data|event|id|retry)?:/.test(prefix.trimStart())) {
      throw new InvalidCompletionError("not an event stream", firstBytes(prefix));
    }
    return assembler.finish();
  }

  async close(): Promise<void> {
    this.#closing.abort(new DOMException("the model client was closed", "AbortError"));
  }
}

/** A non-streamed Messages answer as the events that would have streamed it. */
function wholeMessageEvents(text: string): Array<Record<string, unknown>> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    throw new InvalidCompletionError("not JSON", firstBytes(text));
  }
  const whole = message as { type?: unknown; content?: unknown; stop_reason?: unknown; usage?: unknown };
  if (whole?.type !== "message" || !Array.isArray(whole.content)) throw new InvalidCompletionError("not a Messages answer", firstBytes(text));
  const events: Array<Record<string, unknown>> = [{ type: "message_start", message: { usage: whole.usage } }];
  whole.content.forEach((block: Record<string, unknown>, index) => {
    const started = block.type === "tool_use" ? { ...block, input: {} } : block;
    events.push({ type: "content_block_start", index, content_block: started });
    if (block.type === "tool_use") events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) } });
  });
  events.push({ type: "message_delta", delta: { stop_reason: whole.stop_reason }, usage: whole.usage }, { type: "message_stop" });
  return events;
}
