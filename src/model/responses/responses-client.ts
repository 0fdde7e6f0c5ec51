import OpenAI, { APIError } from "openai";
import { callSignal } from "../call-signal.ts";
import { errorShapingFetch } from "../error-fetch.ts";
import { describeAttemptFailure } from "../openai-failures.ts";
import { completeWithinOutputLimit } from "../output-limit.ts";
import { DEFAULT_RETRY_TIMING, realRetryDeps, type RetryDeps, type RetryInfo, type RetryTiming, withRetries } from "../retry.ts";
import { readSse } from "../sse.ts";
import type { ModelClient, ModelRequest, ModelResponse } from "../types.ts";
import { InvalidCompletionError, firstBytes } from "../wire-completion.ts";
import { OPENAI_DEFAULT_BASE_URL } from "../providers/endpoints.ts";
import { detectProfile } from "../profiles/detect.ts";
import { ResponsesBodyEncoder } from "./responses-body.ts";
import { ResponsesStreamAssembler } from "./responses-stream.ts";

/**
 * The OpenAI Responses adapter, through the openai SDK (its post, auth and
 * error statuses) with the body encoded and the event stream read by us.
 * Stateless: `store: false`, the whole history in
 * every request, reasoning items carried in it.
 */
export interface ResponsesModelClientOptions {
  model: string;
  apiKey: string;
  baseUrl?: string;
  /** Sets the `api-version` query parameter (Azure OpenAI); the base URL's own query is kept either way. */
  apiVersion?: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxRetries?: number;
  onRetry?: (info: RetryInfo) => void;
  retryTiming?: Partial<RetryTiming>;
  retryDeps?: Partial<RetryDeps>;
  maxOutputTokens?: (model: string) => number | undefined;
  /**
   * Whether a model reasons, when known (the catalogue's `reasoning`): encrypted
   * reasoning is asked for when it does or is not known, and not for a model
   * known not to reason (the API refuses the request then).
   */
  reasons?: (model: string) => boolean | undefined;
}

export class ResponsesModelClient implements ModelClient {
  readonly model: string;
  readonly endpoint: string;
  readonly #sdk: OpenAI;
  readonly #options: ResponsesModelClientOptions;
  readonly #timing: RetryTiming;
  readonly #deps: RetryDeps;
  readonly #closing = new AbortController();
  /** Turned off for the life of this client by an endpoint that refuses `include` (a model without reasoning). */
  #encryptedReasoning = true;
  /** Kept for the client's life: a step encodes only its new messages (see ResponsesBodyEncoder). */
  readonly #encoder = new ResponsesBodyEncoder();

  constructor(options: ResponsesModelClientOptions) {
    this.model = options.model;
    this.endpoint = options.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
    this.#options = options;
    this.#timing = { ...DEFAULT_RETRY_TIMING, ...options.retryTiming, ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }) };
    this.#deps = { ...realRetryDeps, ...options.retryDeps };
    // The SDK puts the path after its base URL whole: a query there (Azure's ?api-version=) goes as its default query.
    const base = new URL(this.endpoint);
    const query: Record<string, string> = Object.fromEntries(base.searchParams);
    if (options.apiVersion !== undefined) query["api-version"] = options.apiVersion;
    base.search = "";
    const keyHeader = detectProfile(this.endpoint).keyHeader;
    this.#sdk = new OpenAI({
      baseURL: base.toString(),
      apiKey: options.apiKey,
      timeout: Math.ceil(options.timeoutMs),
      maxRetries: 0,
      ...(Object.keys(query).length > 0 ? { defaultQuery: query } : {}),
      // Azure's key header, as its Chat Completions profile sends it.
      defaultHeaders: { ...(keyHeader ? { [keyHeader]: options.apiKey } : {}), ...options.headers },
      fetch: errorShapingFetch,
    });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const model = request.model ?? this.model;
    return completeWithinOutputLimit(request, this.#options.maxOutputTokens?.(model), this.#options.onRetry, (maxTokens) =>
      this.#complete(request, model, maxTokens),
    );
  }

  async #complete(request: ModelRequest, model: string, maxTokens: number | undefined): Promise<ModelResponse> {
    // One signal a call, let go of when it ends (see call-signal.ts).
    const call = callSignal(request.signal, this.#closing.signal);
    const signal = call.signal;
    try {
      return await withRetries(
        () => this.#attempt(request, model, maxTokens, signal),
        (error) => describeAttemptFailure(error, signal),
        {
          endpoint: this.endpoint,
          model,
          timeoutMs: this.#options.timeoutMs,
          requestUrl: `${this.endpoint.replace(/\/+$/, "")}/responses`,
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

  async #attempt(request: ModelRequest, model: string, maxTokens: number | undefined, signal: AbortSignal): Promise<ModelResponse> {
    const encryptedReasoning = this.#encryptedReasoning && this.#options.reasons?.(model) !== false;
    const body = this.#encoder.encode({ model, messages: request.messages, tools: request.tools, maxTokens, encryptedReasoning }, { stream: true });
    let response: Response;
    try {
      // The SDK's post of /responses (its auth, headers and error statuses), with the body already encoded: sent as it is.
      response = await this.#sdk
        .post("/responses", { body, stream: true, headers: { "content-type": "application/json", "X-Agent-Name": request.identity }, signal })
        .asResponse();
    } catch (error) {
      if (encryptedReasoning && refusesEncryptedReasoning(error)) {
        this.#encryptedReasoning = false;
        return this.#attempt(request, model, maxTokens, signal);
      }
      throw error;
    }
    const assembler = new ResponsesStreamAssembler(request.onText, request.onPiece);
    if (!response.body || !(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const text = await response.text();
      throw new InvalidCompletionError("not an event stream", firstBytes(text));
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

/** A 400 naming the `include` of encrypted reasoning: "Encrypted content is not supported with this model." */
function refusesEncryptedReasoning(error: unknown): boolean {
  if (!(error instanceof APIError) || error.status !== 400) return false;
  const body = error.error as { message?: unknown; param?: unknown } | undefined;
  const text = `${typeof body?.message === "string" ? body.message : error.message} ${typeof body?.param === "string" ? body.param : ""}`;
  return /encrypted|\binclude\b/i.test(text);
}
