import { ModelError } from "../core/errors.ts";
import type { ModelRetryInfo } from "./types.ts";
import { type AttemptFailure, type EndpointContext, classify, describeFailure, endpointError, exhaustedError } from "./endpoint-errors.ts";

export type { AttemptFailure, ConnectionReason } from "./endpoint-errors.ts";
export { describeFailure, isContextOverflow } from "./endpoint-errors.ts";

/**
 * Our own retry loop around one model request (the SDK's retries are off, so
 * there is one policy, one place that sleeps, and the sleeping can be injected).
 * It is SDK-neutral: the adapter describes each failed attempt as an
 * `AttemptFailure`, this file decides whether to wait and try again, and
 * endpoint-errors.ts says which `ModelError` ends it.
 */

/** 408 and the 5xx a gateway or an overloaded model gives (529: Anthropic-style "overloaded"). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504, 529]);

export interface RetryTiming {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A server asking for a longer wait than this is capped: a wedged run is worse than one more 429. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_TIMING: RetryTiming = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
};

/** Injected so tests never wait and can pin the jitter. */
export interface RetryDeps {
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Epoch ms: only used to turn an HTTP-date Retry-After into a delay. */
  now: () => number;
}

export const realRetryDeps: RetryDeps = { sleep: abortableSleep, random: Math.random, now: Date.now };

export type RetryInfo = ModelRetryInfo;

export interface RetryContext extends EndpointContext {
  timing: RetryTiming;
  deps: RetryDeps;
  signal?: AbortSignal;
  onRetry?: (info: RetryInfo) => void;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or the retries
 * are spent. `describe` turns whatever the attempt threw into an AttemptFailure.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  describe: (error: unknown) => AttemptFailure,
  context: RetryContext,
): Promise<T> {
  for (let retry = 0; ; retry += 1) {
    context.signal?.throwIfAborted();
    let failure: AttemptFailure;
    try {
      return await attempt();
    } catch (error) {
      // The attempt already knows how the request ends (a refusal): asking again gets the same.
      if (error instanceof ModelError) throw error;
      failure = describe(error);
    }
    if (failure.kind === "aborted") {
      context.signal?.throwIfAborted();
      throw new DOMException("the model request was aborted", "AbortError");
    }
    if (!isRetryable(failure)) throw endpointError(failure, context);
    if (retry >= retryLimit(failure, context.timing)) throw exhaustedError(failure, retry + 1, context);
    const delayMs = retryDelay(failure, retry, context);
    context.onRetry?.({ attempt: retry + 1, delayMs, reason: describeFailure(failure, context) });
    await context.deps.sleep(delayMs, context.signal);
  }
}

/**
 * An error inside a 200 stream that a later request may not meet: the model
 * overloaded, a rate limit, the server's own failure (Anthropic's `overloaded_error`,
 * `rate_limit_error`, `api_error`; the Responses API's `server_error`).
 */
const TRANSIENT_STREAM_ERRORS: ReadonlySet<string> = new Set(["overloaded_error", "rate_limit_error", "api_error", "server_error", "rate_limit_exceeded"]);

export function isTransientStreamError(failure: AttemptFailure & { kind: "stream_error" }): boolean {
  const { error } = failure;
  if (error.numericCode !== undefined && RETRYABLE_STATUSES.has(error.numericCode)) return true;
  return [error.type, error.code].some((name) => name !== undefined && TRANSIENT_STREAM_ERRORS.has(name));
}

export function isRetryable(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case "connection":
    case "invalid_response":
    case "empty":
      return true;
    case "http": {
      const kind = classify(failure);
      return RETRYABLE_STATUSES.has(failure.status) && (kind === "rate_limit" || kind === "server");
    }
    case "stream_error":
      // Only before any text was shown: the user saw the rest, and a second answer would differ.
      return failure.afterText === false && isTransientStreamError(failure);
    case "aborted":
      return false;
  }
}

/**
 * How many retries a failure gets. A network failure or an overloaded server may
 * pass; a server that answered nonsense or nothing at all rarely does twice, so
 * those get one more chance only.
 */
function retryLimit(failure: AttemptFailure, timing: RetryTiming): number {
  const once = failure.kind === "invalid_response" || failure.kind === "empty" || failure.kind === "stream_error";
  return once ? Math.min(1, timing.maxRetries) : timing.maxRetries;
}

/** The server's Retry-After when it gave one (capped), else capped exponential backoff with full jitter. */
export function retryDelay(failure: AttemptFailure, retry: number, context: RetryContext): number {
  const { timing, deps } = context;
  if (failure.kind === "http") {
    // The header first; Gemini says it in its body (RetryInfo's retryDelay) instead.
    const asked = (failure.headers && retryAfterMs(failure.headers, deps.now())) ?? failure.error.retryAfterMs;
    if (asked !== undefined) return Math.min(asked, timing.maxRetryAfterMs);
  }
  const ceiling = Math.min(timing.maxDelayMs, timing.baseDelayMs * 2 ** retry);
  return Math.floor(deps.random() * ceiling);
}

/** `retry-after-ms` (OpenAI's, fractional ms) wins over `Retry-After` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers, nowMs: number): number | undefined {
  const ms = parseNonNegative(headers.get("retry-after-ms"));
  if (ms !== undefined) return ms;
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  const seconds = parseNonNegative(value);
  if (seconds !== undefined) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

function parseNonNegative(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

/** Like Bun.sleep, but an abort ends the wait at once (with the signal's reason). */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
