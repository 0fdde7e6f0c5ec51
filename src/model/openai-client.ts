import { callSignal } from "./call-signal.ts";
import { HttpStatusError, describeFetchFailure } from "./fetch-failures.ts";
import { postForAnswer } from "./timed-post.ts";
import type { ChatProfile } from "./profiles/chat-profile.ts";
import { detectProfile } from "./profiles/detect.ts";
import { OPENAI_DEFAULT_BASE_URL, openaiUrl } from "./providers/endpoints.ts";
import { DEFAULT_RETRY_TIMING, realRetryDeps, type RetryDeps, type RetryInfo, type RetryTiming, withRetries } from "./retry.ts";
import { readSse } from "./sse.ts";
import { StreamAssembler } from "./stream-assembler.ts";
import { completeWithinOutputLimit } from "./output-limit.ts";
import { type ModelClient, type ModelRequest, type ModelResponse, tellWhole } from "./types.ts";
import { InvalidCompletionError, firstBytes, parseCompletionBody } from "./wire-completion.ts";
import { WireBodyEncoder } from "./wire-body.ts";

export { fromWireResponse } from "./wire-completion.ts";

/** Chat completions are posted with fetch itself: only the Responses adapter and openai-failures.ts use the `openai` SDK. */
export const DEFAULT_BASE_URL = OPENAI_DEFAULT_BASE_URL;

export interface OpenAIModelClientOptions {
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible API root; api.openai.com when absent. Its query is kept after the path (Azure's `?api-version=`). */
  baseUrl?: string;
  /** Sets the `api-version` query parameter (Azure OpenAI). */
  apiVersion?: string;
  /** Sent with every request; ours (X-Agent-Name) win over a header of the same name. */
  headers?: Record<string, string>;
  timeoutMs: number;
  maxRetries?: number;
  onRetry?: (info: RetryInfo) => void;
  /** Backoff tuning and the sleep/random/clock the retries use (tests inject them). */
  retryTiming?: Partial<RetryTiming>;
  retryDeps?: Partial<RetryDeps>;
  /** Ask for a streamed answer (the default); false sends every request without `stream`. */
  stream?: boolean;
  /** The endpoint's dialect; detected from `baseUrl` when absent. */
  profile?: ChatProfile;
  /**
   * The most output tokens `model` may write, when known (the model catalogue):
   * an answer cut by the length limit in the middle of a tool call is asked for
   * once more with this limit.
   */
  maxOutputTokens?: (model: string) => number | undefined;
}

/** A request's JSON text, with `tail`'s fields (the attempt's `stream`, `stream_options`) after the rest. */
type WireBody = (tail: Record<string, unknown>) => Blob;

export class OpenAIModelClient implements ModelClient {
  readonly model: string;
  readonly endpoint: string;
  /** Where requests are posted, and the headers every one carries (names in lower case, so a configured header replaces ours of any case). */
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #options: OpenAIModelClientOptions;
  readonly #timing: RetryTiming;
  readonly #deps: RetryDeps;
  /** Fired by close(): cancels requests still in flight, so shutdown never waits on the network. */
  readonly #closing = new AbortController();
  /**
   * Whether to ask for a stream. Turned off for the life of this client (the
   * runtime's session) by an endpoint that refuses streaming or answers a
   * streaming request with a whole completion.
   */
  #streaming: boolean;
  /** Whether to send `stream_options`: the profile's say, turned off by an endpoint that refuses it (Mistral's 422). */
  #streamOptions: boolean;
  readonly profile: ChatProfile;
  readonly #encoder: WireBodyEncoder;

  constructor(options: OpenAIModelClientOptions) {
    this.model = options.model;
    this.endpoint = options.baseUrl ?? DEFAULT_BASE_URL;
    this.#options = options;
    this.#timing = {
      ...DEFAULT_RETRY_TIMING,
      ...options.retryTiming,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    };
    this.#deps = { ...realRetryDeps, ...options.retryDeps };
    this.#streaming = options.stream ?? true;
    this.profile = options.profile ?? detectProfile(options.baseUrl);
    this.#streamOptions = this.profile.streamOptions;
    this.#encoder = new WireBodyEncoder(this.profile);
    // An explicit base URL always (flags > env > config decide it, nothing reads OPENAI_BASE_URL behind their back).
    this.#url = openaiUrl(this.endpoint, "chat/completions", options.apiVersion);
    // What the SDK sent, in its order: a configured header (the key's own header of a dialect, then the user's) wins over ours.
    this.#headers = lowerCased([
      { accept: "application/json", authorization: `Bearer ${options.apiKey}` },
      this.profile.keyHeader ? { [this.profile.keyHeader]: options.apiKey } : {},
      options.headers ?? {},
    ]);
  }

  /** False once the endpoint refused a stream: later requests go without `stream`. */
  get streaming(): boolean {
    return this.#streaming;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model ?? this.model;
    return completeWithinOutputLimit(request, this.#options.maxOutputTokens?.(model), this.#options.onRetry, (maxTokens) =>
      this.#complete(request, model, maxTokens),
    );
  }

  async #complete(request: ModelRequest, model: string, maxTokens?: number): Promise<ModelResponse> {
    // One signal a call, let go of when it ends (see call-signal.ts).
    const call = callSignal(request.signal, this.#closing.signal);
    const signal = call.signal;
    // The request's JSON, with the fields of the attempt (stream or not) after; encoded here, not by the SDK, so only new messages cost.
    const body: WireBody = (tail) => this.#encoder.encode(model, request.messages, request.tools, maxTokens, tail);
    try {
      return await withRetries(
        async () => (this.#streaming ? this.#streamed(body, request, signal) : this.#whole(body, request, signal)),
        (error) => describeFetchFailure(error, signal),
        {
          endpoint: this.endpoint,
          model,
          timeoutMs: this.#options.timeoutMs,
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

  /** One attempt without streaming: the whole body, parsed by us so a bad one can be quoted. */
  async #whole(body: WireBody, request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const response = await this.#post(body({}), request, signal);
    const whole = parseCompletionBody(await response.text());
    tellWhole(request, whole.message);
    return whole;
  }

  /**
   * One streamed attempt. An endpoint that refuses `stream_options` is asked
   * again without it; one that refuses to stream at all, without `stream` — both
   * for good (the life of this client: the runtime's session).
   */
  async #streamed(body: WireBody, request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const streamBody = body({ stream: true, ...(this.#streamOptions ? { stream_options: { include_usage: true } } : {}) });
    let response: Response;
    try {
      response = await this.#post(streamBody, request, signal);
    } catch (error) {
      const refused = refusedStreamParameter(error);
      if (refused === "stream_options" && this.#streamOptions) {
        this.#streamOptions = false;
        return this.#streamed(body, request, signal);
      }
      if (refused === undefined) throw error;
      this.#streaming = false;
      return this.#whole(body, request, signal);
    }
    const type = response.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      const text = await response.text();
      // A whole completion in answer to a streaming request: the endpoint ignores
      // `stream`, so stop asking. Anything else is an invalid answer.
      const whole = parseCompletionBody(text);
      this.#streaming = false;
      tellWhole(request, whole.message);
      return whole;
    }
    if (!response.body) throw new InvalidCompletionError("an event stream without a body", "");
    const assembler = new StreamAssembler(request.onText, this.profile.toolCallDeltas, request.onPiece);
    let prefix = "";
    let done = false;
    for await (const event of readSse(response.body, { idleMs: this.#options.timeoutMs, onPrefix: (text) => (prefix = text) })) {
      if (event.data === "[DONE]") {
        done = true;
        break;
      }
      assembler.push(event.data, event.event);
    }
    if (assembler.chunks === 0 && prefix.trim() !== "" && !/^(data|event|id|retry)?:/.test(prefix.trimStart())) {
      // Said it was a stream, sent something else (a proxy's page).
      throw new InvalidCompletionError("not an event stream", firstBytes(prefix));
    }
    return assembler.finish(done);
  }

  /** POSTs the request's JSON to /chat/completions (see postForAnswer). */
  #post(json: Blob, request: ModelRequest, signal: AbortSignal): Promise<Response> {
    const headers = { ...this.#headers, "content-type": "application/json", "x-agent-name": request.identity };
    return postForAnswer(this.#url, headers, json, signal, Math.ceil(this.#options.timeoutMs));
  }

  async close(): Promise<void> {
    this.#closing.abort(new DOMException("the model client was closed", "AbortError"));
  }
}

/**
 * An endpoint that will not stream says so with a 4xx naming the parameter
 * (vLLM, some proxies: "stream is not supported", param "stream"); a 501 says
 * it for the whole feature. Mistral names `stream_options` in a 422: it streams,
 * without that.
 */
function refusedStreamParameter(error: unknown): "stream" | "stream_options" | undefined {
  if (!(error instanceof HttpStatusError)) return undefined;
  if (![400, 405, 415, 422, 501].includes(error.status)) return undefined;
  const text = `${error.error.message} ${error.error.param ?? ""}`;
  if (/\bstream_options\b/i.test(text)) return "stream_options";
  return /\bstream(ing)?\b/i.test(text) ? "stream" : undefined;
}

/** Header sets merged in order, each name in lower case: a later set's header replaces an earlier one's whatever its case. */
function lowerCased(sets: readonly Record<string, string>[]): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const set of sets) for (const [name, value] of Object.entries(set)) merged[name.toLowerCase()] = value;
  return merged;
}
