import { z } from "zod";
import type { ProviderName } from "./providers/provider.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * The conversation as the runner keeps it: provider-neutral, so the canonical
 * history on disk does not depend on the wire format of one SDK. The OpenAI
 * adapter translates to and from chat completions.
 */
/**
 * Fields an endpoint sent beside the standard ones (DeepSeek's `reasoning_content`,
 * Gemini's `extra_content`), kept verbatim so the endpoint's profile can send
 * them back (src/model/profiles/). Optional: histories written before it load.
 */
export const WireExtra = lazySchema(() => z.record(z.string(), z.unknown()));
export type WireExtra = z.infer<typeof WireExtra>;

export const ToolCall = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1),
    name: z.string().min(1),
    /** The arguments exactly as the model wrote them (JSON text, possibly malformed). */
    arguments: z.string(),
    extra: WireExtra.optional(),
  }),
);
export type ToolCall = z.infer<typeof ToolCall>;

export const ChatMessage = lazySchema(() =>
  z.discriminatedUnion("role", [
    z.strictObject({ role: z.literal("system"), content: z.string() }),
    z.strictObject({ role: z.literal("user"), content: z.string() }),
    z.strictObject({
      role: z.literal("assistant"),
      content: z.string().nullable(),
      toolCalls: z.array(ToolCall).optional(),
      extra: WireExtra.optional(),
    }),
    z.strictObject({
      role: z.literal("tool"),
      toolCallId: z.string().min(1),
      content: z.string(),
      isError: z.boolean().optional(),
    }),
  ]),
);
export type ChatMessage = z.infer<typeof ChatMessage>;
export type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;
export type ToolResultMessage = Extract<ChatMessage, { role: "tool" }>;

/** What the model is told about one tool: its JSON schema is generated from the tool's zod schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export const Usage = lazySchema(() =>
  z.strictObject({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    /** The part of `inputTokens` the endpoint served from its prompt cache; absent when it does not say. */
    cachedInputTokens: z.number().int().nonnegative().optional(),
    /** The part of `inputTokens` written to the prompt cache (Anthropic's `cache_creation_input_tokens`), dearer than plain input. */
    cacheWriteInputTokens: z.number().int().nonnegative().optional(),
  }),
);
export type Usage = z.infer<typeof Usage>;

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x: number | undefined, y: number | undefined) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const cached = sum(a.cachedInputTokens, b.cachedInputTokens);
  const written = sum(a.cacheWriteInputTokens, b.cacheWriteInputTokens);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
    ...(written !== undefined ? { cacheWriteInputTokens: written } : {}),
  };
}

export const FINISH_REASONS = ["stop", "tool_calls", "length", "content_filter", "other"] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** The agent asking (`lead`, a teammate's name, a subagent's id): sent as the X-Agent-Name header. */
  identity: string;
  signal?: AbortSignal;
  /**
   * Told each piece of the answer's text as it streams in. A retried attempt
   * starts over from its first piece, after `onRetry` says so: what came before
   * belongs to an answer that was thrown away.
   */
  onText?: (text: string) => void;
  /** Told each other piece of the answer as it streams in (a tool call's input, reasoning), as `onText` is told text. */
  onPiece?: (piece: AnswerPiece) => void;
  /** Told before each retry of this request; the client's own `onRetry` when absent. */
  onRetry?: (info: ModelRetryInfo) => void;
  /** Another model than the client's own for this request (`/model NAME` in a session). */
  model?: string;
  /** A cap on the answer's tokens (`agent doctor`'s check request); the endpoint's own default when absent. */
  maxTokens?: number;
}

/**
 * A piece of a streamed answer besides its text: a tool call's input JSON
 * (`index`: the call's place among the answer's calls; its first piece may be
 * empty, naming the call as it starts), or the model's reasoning where the
 * endpoint streams it (Anthropic's thinking, DeepSeek's `reasoning_content`).
 */
export type AnswerPiece = { kind: "tool_input"; index: number; id: string; name: string; json: string } | { kind: "thinking"; text: string };

/** A whole answer that did not stream, told to the request's listeners at once: its text, then each call's input. */
export function tellWhole(request: Pick<ModelRequest, "onText" | "onPiece">, message: AssistantMessage): void {
  if (message.content) request.onText?.(message.content);
  for (const [index, call] of (message.toolCalls ?? []).entries()) request.onPiece?.({ kind: "tool_input", index, id: call.id, name: call.name, json: call.arguments });
}

/** A retry about to happen: which one (1 for the first), after how long, and why. */
export interface ModelRetryInfo {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface ModelResponse {
  message: AssistantMessage;
  finishReason: FinishReason;
  usage: Usage;
}

/**
 * One model endpoint. `complete` makes one request (retries on 429/5xx/network
 * errors, cut streams and invalid or empty answers live in the implementation)
 * and throws a `ModelError` subclass on failure. The response is always the
 * whole assembled answer, streamed or not.
 */
export interface ModelClient {
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
  close(): Promise<void>;
}

/** Everything needed to build the model client, after flags, environment and config are merged. */
export interface ModelClientOptions {
  model: string;
  /** OpenAI-compatible endpoint; the SDK's default (api.openai.com) when absent. */
  baseUrl?: string;
  /** The wire protocol (src/model/providers/provider.ts); `openai` (Chat Completions) when absent. */
  provider?: ProviderName;
  /** The endpoint's Chat Completions dialect by name (src/model/profiles/); detected from `baseUrl` when absent or `auto`. */
  profile?: string;
  /** Azure OpenAI's `api-version` query parameter (--api-version); the base URL's own query is kept either way. */
  apiVersion?: string;
  apiKey?: string;
  /** Extra HTTP headers sent with every request (config `headers`). */
  headers?: Record<string, string>;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Retries on 429/5xx/network errors before giving up. */
  maxRetries?: number;
  /** Append every request/response to this JSONL cassette. */
  recordPath?: string;
  /** Answer from this cassette, with no network. */
  replayPath?: string;
  /** Told before each retry (for progress on stderr). */
  onRetry?: (info: ModelRetryInfo) => void;
}
