import {
  ContextOverflowError,
  EmptyModelAnswerError,
  InvalidModelResponseError,
  type ModelError,
  ModelRequestError,
  ModelUnavailableError,
  QuotaExceededError,
  UnknownModelError,
} from "../core/errors.ts";

/**
 * What went wrong with one attempt, in SDK-neutral terms, and the one-line
 * error each failure ends in. Classified by what the answer says (its body's
 * code and message), not by the status alone: a 404 may be an unknown model or
 * a wrong URL, a 429 a rate limit to wait out or a spent quota that waiting
 * never fixes.
 */
export type AttemptFailure =
  /** The caller's signal fired: never retried. */
  | { kind: "aborted" }
  /** No complete HTTP answer: refused, reset, closed, DNS, TLS, a timeout, or a stream cut before it finished. */
  | { kind: "connection"; reason: ConnectionReason; detail: string; cause: unknown }
  /** An HTTP error status. `message` is the server's own, flattened to one line. */
  | {
      kind: "http";
      status: number;
      code: string | undefined;
      /** The error body's `type` (OpenAI puts `insufficient_quota` there too). */
      type?: string | undefined;
      message: string;
      headers: Headers | undefined;
      cause: unknown;
    }
  /** A 2xx answer that is not a chat completion (wrong --base-url, a proxy's HTML page). */
  | { kind: "invalid_response"; detail: string; firstBytes: string; cause: unknown }
  /** A valid completion with no text and no tool calls. */
  | { kind: "empty" };

export type ConnectionReason = "refused" | "reset" | "closed" | "tls" | "dns" | "timeout" | "cut" | "other";

export interface EndpointContext {
  /** The base URL, named in errors so the user knows which endpoint failed. */
  endpoint: string;
  model: string;
  timeoutMs: number;
}

/** The error for a failure that is not retried (or whose one retry also failed). */
export function endpointError(failure: AttemptFailure, context: EndpointContext): ModelError {
  const { endpoint, model } = context;
  switch (failure.kind) {
    case "http":
      break;
    case "invalid_response":
      return new InvalidModelResponseError(
        `the endpoint ${endpoint} returned an invalid response (first 200 bytes: ${failure.firstBytes || "(empty body)"}): check --base-url (it usually ends in /v1)`,
        { cause: failure.cause },
      );
    default:
      return exhaustedError(failure, 1, context);
  }
  const { status, message, cause } = failure;
  const said = `HTTP ${status}${message ? `: ${message}` : ""}`;
  if (status === 401 || status === 403) {
    return new ModelRequestError(`authentication failed at ${endpoint} (${said}): check OPENAI_API_KEY`, status, { cause });
  }
  if (status === 404) {
    if (isUnknownModel(failure)) {
      return new UnknownModelError(`unknown model ${model} at ${endpoint} (${said}): check --model / AGENT_MODEL`, status, { cause });
    }
    return new ModelRequestError(`endpoint answered 404 for ${completionsUrl(endpoint)}: check --base-url (it usually ends in /v1)`, status, {
      cause,
    });
  }
  if (isQuotaExceeded(failure)) {
    return new QuotaExceededError(`quota exceeded for this key at ${endpoint} (${said}): check the plan and billing of OPENAI_API_KEY`, status, {
      cause,
    });
  }
  if (isContextOverflow(failure)) {
    return new ContextOverflowError(`the request is longer than the context window of ${model} (${said})`, { cause });
  }
  if (status >= 400 && status < 500) {
    return new ModelRequestError(`the model endpoint ${endpoint} rejected the request (${said})`, status, { cause });
  }
  return exhaustedError(failure, 1, context);
}

/** The error once the retries are spent. */
export function exhaustedError(failure: AttemptFailure, attempts: number, context: EndpointContext): ModelError {
  if (failure.kind === "empty") {
    const times = attempts > 1 ? `${attempts} times` : "once";
    return new EmptyModelAnswerError(
      `the model ${context.model} answered with no text and no tool calls (${times}): ask again, or try another model`,
    );
  }
  if (failure.kind === "invalid_response") return endpointError(failure, context);
  const last = describeFailure(failure, context);
  const tries = attempts > 1 ? `after ${attempts} attempts (last: ${last})` : `(${last})`;
  const cause = failure.kind === "aborted" ? undefined : failure.cause;
  if (failure.kind === "connection") {
    // The host alone: what the user typed in --base-url, without the runtime's own hint text.
    const host = hostOf(context.endpoint);
    const what =
      failure.reason === "cut"
        ? `the model endpoint at ${host} cut the answer off ${tries}`
        : `cannot reach the model endpoint at ${host} ${tries}`;
    return new ModelUnavailableError(`${what}: check --base-url and that the endpoint is up`, { cause });
  }
  if (failure.kind === "http" && failure.status === 429) {
    return new ModelUnavailableError(
      `the model endpoint ${context.endpoint} kept rate limiting the requests ${tries}: wait a minute and run again`,
      { cause },
    );
  }
  return new ModelUnavailableError(`the model endpoint ${context.endpoint} failed ${tries}: check --base-url / that the endpoint is up`, {
    cause,
  });
}

/** One line for a failure: in retry notices and inside the final error. */
export function describeFailure(failure: AttemptFailure, context: Pick<EndpointContext, "timeoutMs">): string {
  switch (failure.kind) {
    case "aborted":
      return "aborted";
    case "connection":
      return failure.reason === "timeout" ? `timed out after ${context.timeoutMs} ms` : failure.detail;
    case "http":
      return `HTTP ${failure.status}${failure.message ? `: ${failure.message}` : ""}`;
    case "invalid_response":
      return `invalid response: ${failure.detail}`;
    case "empty":
      return "an empty answer: no text, no tool calls";
  }
}

const UNKNOWN_MODEL_CODES = new Set(["model_not_found", "unknown_model", "model_not_available"]);
const UNKNOWN_MODEL_MESSAGE = /\bmodel\b.*\b(not found|does not exist|not exist|unknown|is not available)\b|\b(unknown|no such|invalid) model\b/i;

/** A 404 that is about the model, not the URL: OpenAI's `model_not_found`, Ollama's "model … not found". */
export function isUnknownModel(failure: AttemptFailure & { kind: "http" }): boolean {
  return (failure.code !== undefined && UNKNOWN_MODEL_CODES.has(failure.code)) || UNKNOWN_MODEL_MESSAGE.test(failure.message);
}

export function isQuotaExceeded(failure: AttemptFailure & { kind: "http" }): boolean {
  return failure.status === 429 && (failure.code === "insufficient_quota" || failure.type === "insufficient_quota");
}

const OVERFLOW_MESSAGE = /maximum context length|context length|too many tokens|context window|context size|prompt is too long/i;

export function isContextOverflow(failure: AttemptFailure): boolean {
  if (failure.kind !== "http" || (failure.status !== 400 && failure.status !== 413)) return false;
  return failure.code === "context_length_exceeded" || OVERFLOW_MESSAGE.test(failure.message);
}

/** The URL a chat completion is posted to: what a 404 was an answer for. */
export function completionsUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, "")}/chat/completions`;
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return endpoint;
  }
}
