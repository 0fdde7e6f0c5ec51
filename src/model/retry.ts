import { ContextOverflowError, type ModelError, ModelRequestError, ModelUnavailableError } from "../core/errors.ts";

/**
 * Our own retry loop around one model request (the SDK's retries are off, so
 * there is one policy, one place that sleeps, and the sleeping can be injected).
 * It is SDK-neutral: the adapter describes each failed attempt as an
 * `AttemptFailure`, and this file decides whether to wait and try again or which
 * `ModelError` to throw.
 */
export type AttemptFailure =
  /** The caller's signal fired: never retried. */
  | { kind: "aborted" }
  /** No HTTP answer: refused, reset, DNS, TLS, or the request timeout. */
  | { kind: "connection"; timedOut: boolean; detail: string; cause: unknown }
  /** An HTTP error status. `message` is the server's own, flattened to one line. */
  | { kind: "http"; status: number; code: string | undefined; message: string; headers: Headers | undefined; cause: unknown }
  /** An answer that is not a chat completion (wrong --base-url, a proxy's HTML page). */
  | { kind: "invalid_response"; detail: string; cause: unknown };

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

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface RetryContext {
  /** The base URL, named in every error so the user knows which endpoint failed. */
  endpoint: string;
  model: string;
  timeoutMs: number;
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
      failure = describe(error);
    }
    if (failure.kind === "aborted") {
      context.signal?.throwIfAborted();
      throw new DOMException("the model request was aborted", "AbortError");
    }
    if (!isRetryable(failure)) throw finalError(failure, context);
    if (retry >= context.timing.maxRetries) throw exhaustedError(failure, retry + 1, context);
    const delayMs = retryDelay(failure, retry, context);
    context.onRetry?.({ attempt: retry + 1, delayMs, reason: describeFailure(failure, context) });
    await context.deps.sleep(delayMs, context.signal);
  }
}

export function isRetryable(failure: AttemptFailure): boolean {
  if (failure.kind === "connection") return true;
  return failure.kind === "http" && RETRYABLE_STATUSES.has(failure.status);
}

/** The server's Retry-After when it gave one (capped), else capped exponential backoff with full jitter. */
export function retryDelay(failure: AttemptFailure, retry: number, context: RetryContext): number {
  const { timing, deps } = context;
  if (failure.kind === "http" && failure.headers) {
    const asked = retryAfterMs(failure.headers, deps.now());
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

/** A non-retryable failure, mapped to the error that tells the user what to fix. */
export function finalError(failure: AttemptFailure, context: RetryContext): ModelError {
  const { endpoint, model } = context;
  if (failure.kind !== "http") {
    if (failure.kind === "invalid_response") {
      return new ModelRequestError(
        `the model endpoint ${endpoint} did not answer like an OpenAI-compatible chat completions API (${failure.detail}): check --base-url (it usually ends in /v1)`,
        undefined,
        { cause: failure.cause },
      );
    }
    return exhaustedError(failure, 1, context);
  }
  const { status, message, cause } = failure;
  const said = `HTTP ${status}${message ? `: ${message}` : ""}`;
  if (status === 401 || status === 403) {
    return new ModelRequestError(`authentication failed at ${endpoint} (${said}): check OPENAI_API_KEY`, status, { cause });
  }
  if (status === 404) {
    return new ModelRequestError(
      `model ${model} not found at ${endpoint} (${said}): check --model / AGENT_MODEL, and that --base-url is the API root (e.g. …/v1)`,
      status,
      { cause },
    );
  }
  if (isContextOverflow(failure)) {
    return new ContextOverflowError(`the request is longer than the context window of ${model} (${said})`, { cause });
  }
  if (status >= 400 && status < 500) {
    return new ModelRequestError(`the model endpoint ${endpoint} rejected the request (${said})`, status, { cause });
  }
  return exhaustedError(failure, 1, context);
}

const OVERFLOW_MESSAGE = /maximum context length|context length|too many tokens|context window|context size|prompt is too long/i;

export function isContextOverflow(failure: AttemptFailure): boolean {
  if (failure.kind !== "http" || (failure.status !== 400 && failure.status !== 413)) return false;
  return failure.code === "context_length_exceeded" || OVERFLOW_MESSAGE.test(failure.message);
}

function exhaustedError(failure: AttemptFailure, attempts: number, context: RetryContext): ModelUnavailableError {
  const last = describeFailure(failure, context);
  const what =
    failure.kind === "connection"
      ? `cannot reach the model endpoint ${context.endpoint}`
      : `the model endpoint ${context.endpoint} failed`;
  const tries = attempts > 1 ? ` after ${attempts} attempts (last: ${last})` : ` (${last})`;
  return new ModelUnavailableError(`${what}${tries}: check --base-url / that the endpoint is up`, {
    cause: failure.kind === "aborted" ? undefined : failure.cause,
  });
}

export function describeFailure(failure: AttemptFailure, context: Pick<RetryContext, "timeoutMs">): string {
  switch (failure.kind) {
    case "aborted":
      return "aborted";
    case "connection":
      return failure.timedOut ? `timed out after ${context.timeoutMs} ms` : failure.detail;
    case "http":
      return `HTTP ${failure.status}${failure.message ? `: ${failure.message}` : ""}`;
    case "invalid_response":
      return failure.detail;
  }
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
