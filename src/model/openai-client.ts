import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { z } from "zod";
import {
  type AttemptFailure,
  DEFAULT_RETRY_TIMING,
  realRetryDeps,
  type RetryDeps,
  type RetryInfo,
  type RetryTiming,
  withRetries,
} from "./retry.ts";
import type {
  AssistantMessage,
  ChatMessage,
  FinishReason,
  ModelClient,
  ModelRequest,
  ModelResponse,
  ToolCall,
  ToolSpec,
  Usage,
} from "./types.ts";

/** The only file that imports `openai`: everything else speaks our camelCase types. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIModelClientOptions {
  model: string;
  apiKey: string;
  /** Any OpenAI-compatible API root; api.openai.com when absent. */
  baseUrl?: string;
  /** Sent with every request; ours (X-Agent-Name) win over a header of the same name. */
  headers?: Record<string, string>;
  timeoutMs: number;
  maxRetries?: number;
  onRetry?: (info: RetryInfo) => void;
  /** Backoff tuning and the sleep/random/clock the retries use (tests inject them). */
  retryTiming?: Partial<RetryTiming>;
  retryDeps?: Partial<RetryDeps>;
}

export class OpenAIModelClient implements ModelClient {
  readonly model: string;
  readonly endpoint: string;
  readonly #sdk: OpenAI;
  readonly #options: OpenAIModelClientOptions;
  readonly #timing: RetryTiming;
  readonly #deps: RetryDeps;
  /** Fired by close(): cancels requests still in flight, so shutdown never waits on the network. */
  readonly #closing = new AbortController();

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
    // An explicit baseURL: the SDK would otherwise read OPENAI_BASE_URL itself,
    // behind the back of our flags > env > config precedence.
    this.#sdk = new OpenAI({
      baseURL: this.endpoint,
      apiKey: options.apiKey,
      timeout: Math.ceil(options.timeoutMs),
      maxRetries: 0,
      defaultHeaders: options.headers,
    });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const signal = request.signal ? AbortSignal.any([request.signal, this.#closing.signal]) : this.#closing.signal;
    const body = toWireRequest(this.model, request.messages, request.tools);
    return withRetries(
      async () => {
        const raw = await this.#sdk.chat.completions.create(body, {
          headers: { "X-Agent-Name": request.identity },
          signal,
        });
        return fromWireResponse(raw);
      },
      describeFailure,
      {
        endpoint: this.endpoint,
        model: this.model,
        timeoutMs: this.#options.timeoutMs,
        timing: this.#timing,
        deps: this.#deps,
        signal,
        onRetry: this.#options.onRetry,
      },
    );
  }

  async close(): Promise<void> {
    this.#closing.abort(new DOMException("the model client was closed", "AbortError"));
  }
}

export function toWireRequest(
  model: string,
  messages: ChatMessage[],
  tools: ToolSpec[],
): ChatCompletionCreateParamsNonStreaming {
  return {
    model,
    messages: messages.map(toWireMessage),
    // Some compatible servers reject an empty `tools` array: leave it out instead.
    ...(tools.length > 0 ? { tools: tools.map(toWireTool) } : {}),
  };
}

function toWireMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content ?? "" };
      return {
        role: "assistant",
        content: message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: "function" as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

function toWireTool(tool: ToolSpec): ChatCompletionTool {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * What we read from an answer, checked rather than trusted: a wrong --base-url
 * can return HTML with status 200, and local servers differ in what they omit.
 */
const WireCompletion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({
                  name: z.string().min(1),
                  arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
                }),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
});
type WireCompletion = z.infer<typeof WireCompletion>;

/** Thrown inside an attempt for an answer that is not a chat completion; never retried. */
class InvalidCompletionError extends Error {}

export function fromWireResponse(raw: unknown): ModelResponse {
  const parsed = WireCompletion.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    const what = typeof raw === "string" ? "a text body" : `${issue?.message ?? "an unexpected shape"}${where}`;
    throw new InvalidCompletionError(`got ${what}`);
  }
  const [choice] = parsed.data.choices as [WireCompletion["choices"][number]];
  const toolCalls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => ({
    // A few local servers send no id; the next request must still pair results with calls.
    id: call.id || `call_${crypto.randomUUID()}_${index}`,
    name: call.function.name,
    // Raw text on purpose: the tool pipeline parses it and reports malformed JSON to the model.
    arguments:
      typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
  }));
  const message: AssistantMessage = {
    role: "assistant",
    content: choice.message.content ?? choice.message.refusal ?? null,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
  return { message, finishReason: finishReason(choice.finish_reason, toolCalls.length > 0), usage: usage(parsed.data.usage) };
}

function finishReason(reason: string | null | undefined, hasToolCalls: boolean): FinishReason {
  // Ollama and some llama.cpp builds say "stop" while returning tool calls.
  if (hasToolCalls && (reason === "stop" || !reason)) return "tool_calls";
  switch (reason) {
    case "stop":
    case "length":
    case "content_filter":
    case "tool_calls":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "other";
  }
}

function usage(wire: WireCompletion["usage"]): Usage {
  const count = (n: number | null | undefined) => (n && n > 0 ? Math.trunc(n) : 0);
  return { inputTokens: count(wire?.prompt_tokens), outputTokens: count(wire?.completion_tokens) };
}

/** Tells the retry loop what went wrong, in SDK-neutral terms. */
export function describeFailure(error: unknown): AttemptFailure {
  if (error instanceof APIUserAbortError) return { kind: "aborted" };
  if (error instanceof APIConnectionTimeoutError) return { kind: "connection", timedOut: true, detail: "timed out", cause: error };
  if (error instanceof APIConnectionError || (error instanceof APIError && error.status === undefined)) {
    return { kind: "connection", timedOut: false, detail: connectionDetail(error), cause: error };
  }
  if (error instanceof APIError && error.status !== undefined) {
    return {
      kind: "http",
      status: error.status,
      code: typeof error.code === "string" ? error.code : undefined,
      message: serverMessage(error),
      headers: error.headers,
      cause: error,
    };
  }
  const detail = error instanceof InvalidCompletionError ? error.message : `unreadable answer: ${String(error)}`;
  return { kind: "invalid_response", detail: oneLine(detail), cause: error };
}

/** The innermost cause says what happened (ECONNREFUSED, ENOTFOUND, a TLS error); the SDK only says "Connection error.". */
function connectionDetail(error: Error): string {
  let inner: unknown = error;
  while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
  if (!(inner instanceof Error) || inner === error) return oneLine(error.message);
  const code = (inner as { code?: unknown }).code;
  const text = typeof code === "string" && !inner.message.includes(code) ? `${code}: ${inner.message}` : inner.message;
  return oneLine(text);
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (typeof body?.message === "string") return oneLine(body.message);
  // The SDK prefixes its message with the status, which our errors already name.
  return oneLine(error.message.replace(/^\d{3}\s*/, "").replace(/^status code \(no body\)$/, ""));
}

/** Errors are one line: a server's message can hold newlines, HTML or a stack. */
function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
