import type { ProviderError } from "./error-body.ts";
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
 * code, type, reason and message, whatever its shape: error-body.ts), not by
 * the status alone: a 404 may be an unknown model or a wrong URL, a 429 a rate
 * limit to wait out or a spent quota that waiting never fixes, a 400 Gemini's
 * way of saying the key is wrong.
 */
export type AttemptFailure =
  /** The caller's signal fired: never retried. */
  | { kind: "aborted" }
  /** No complete HTTP answer: refused, reset, closed, DNS, TLS, a timeout, or a stream cut before it finished. */
  | { kind: "connection"; reason: ConnectionReason; detail: string; cause: unknown }
  /** An HTTP error status, and the error its body held. */
  | { kind: "http"; status: number; error: ProviderError; headers: Headers | undefined; cause: unknown }
  /**
   * An error the endpoint sent inside a 200 stream (an `error` event or chunk):
   * the endpoint answered, so this is not a cut connection. Retried once when
   * transient (overloaded, rate limited) and no text of the answer was shown
   * (`afterText` false); undefined when the adapter cannot tell, never retried.
   */
  | { kind: "stream_error"; error: ProviderError; afterText?: boolean; cause: unknown }
  /** A 2xx answer that is not a chat completion (wrong --base-url, a proxy's HTML page). */
  | { kind: "invalid_response"; detail: string; firstBytes: string; cause: unknown }
  /** A valid completion with no text and no tool calls. */
  | { kind: "empty" };

/** What an endpoint's error means for the run. */
export type ErrorClass = "auth" | "unknown_model" | "quota" | "context_overflow" | "rate_limit" | "not_found" | "bad_request" | "server";

export type ConnectionReason = "refused" | "reset" | "closed" | "tls" | "dns" | "timeout" | "cut" | "other";

export interface EndpointContext {
  /** The base URL, named in errors so the user knows which endpoint failed. */
  endpoint: string;
  model: string;
  timeoutMs: number;
  /** The key's environment variable, named when the key is refused; OPENAI_API_KEY when absent. */
  keyVariable?: string;
  /** The URL requests are posted to, named by a 404; `<endpoint>/chat/completions` when absent. */
  requestUrl?: string;
}

/** The error for a failure that is not retried (or whose one retry also failed). */
export function endpointError(failure: AttemptFailure, context: EndpointContext): ModelError {
  const { endpoint, model } = context;
  const key = context.keyVariable ?? "OPENAI_API_KEY";
  switch (failure.kind) {
    case "http":
    case "stream_error":
      break;
    case "invalid_response":
      return new InvalidModelResponseError(
        `the endpoint ${endpoint} returned an invalid response (first 200 bytes: ${failure.firstBytes || "(empty body)"}): check --base-url (it usually ends in /v1)`,
        { cause: failure.cause },
      );
    default:
      return exhaustedError(failure, 1, context);
  }
  const { cause } = failure;
  const status = failure.kind === "http" ? failure.status : undefined;
  const said = describeFailure(failure, context);
  switch (classify(failure)) {
    case "auth":
      return new ModelRequestError(`authentication failed at ${endpoint} (${said}): check ${key}`, status, { cause });
    case "unknown_model":
      return new UnknownModelError(`unknown model ${model} at ${endpoint} (${said}): check --model / AGENT_MODEL`, status, { cause });
    case "quota":
      return new QuotaExceededError(`quota exceeded for this key at ${endpoint} (${said}): check the plan and billing of ${key}`, status, {
        cause,
      });
    case "context_overflow":
      return new ContextOverflowError(`the request is longer than the context window of ${model} (${said})`, { cause });
    default:
      break;
  }
  if (failure.kind === "stream_error") {
    const why =
      failure.afterText === undefined ? "not retried, as the answer was already under way" : failure.afterText ? "not retried, as part of the answer was already shown" : "not retried";
    return new ModelUnavailableError(`the model endpoint ${endpoint} reported an error inside its answer stream (${said}): ${why}; run again`, { cause });
  }
  if (failure.status === 404) {
    // What the server said is kept: a gateway's "deployment not found" or a mock's
    // "no fixture matched" tells the user more than the URL does.
    const told = failure.error.message ? ` (${failure.error.message})` : "";
    return new ModelRequestError(`endpoint answered 404 for ${context.requestUrl ?? completionsUrl(endpoint)}${told}: check --base-url (it usually ends in /v1)`, status, {
      cause,
    });
  }
  if (failure.status >= 400 && failure.status < 500) {
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
  if (failure.kind === "stream_error" && attempts > 1) {
    const what = classify(failure) === "rate_limit" ? "kept rate limiting the requests" : failure.error.type === "overloaded_error" ? "was overloaded" : "kept failing";
    return new ModelUnavailableError(
      `the model endpoint ${context.endpoint} ${what} inside its answer stream after ${attempts} attempts (last: ${describeFailure(failure, context)}): run again later`,
      { cause: failure.cause },
    );
  }
  if (failure.kind === "invalid_response" || failure.kind === "stream_error") return endpointError(failure, context);
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
      return `HTTP ${failure.status}${failure.error.message ? `: ${failure.error.message}` : ""}`;
    case "stream_error": {
      const code = failure.error.code ?? failure.error.numericCode;
      return `stream error${code !== undefined ? ` ${code}` : ""}${failure.error.message ? `: ${failure.error.message}` : ""}`;
    }
    case "invalid_response":
      return `invalid response: ${failure.detail}`;
    case "empty":
      return "an empty answer: no text, no tool calls";
  }
}

const RATE_LIMIT_CODES = new Set(["rate_limit_exceeded", "rate_limit_error"]);
const AUTH_CODES = new Set(["invalid_api_key", "authentication_error", "unauthorized", "permission_denied", "permission_error", "API_KEY_INVALID"]);
const AUTH_STATUSES = new Set(["UNAUTHENTICATED", "PERMISSION_DENIED"]);
const UNKNOWN_MODEL_CODES = new Set(["model_not_found", "unknown_model", "model_not_available", "invalid_model"]);
const UNKNOWN_MODEL_MESSAGE =
  /\bmodels?\b.*\b(not found|does not exist|not exist|unknown|is not available)\b|\b(unknown|no such|invalid) model\b|\bnot a valid model\b/i;
const QUOTA_CODES = new Set(["insufficient_quota", "insufficient_balance", "billing_hard_limit_reached"]);
const OVERFLOW_CODES = new Set(["context_length_exceeded", "exceed_context_size_error", "string_above_max_length"]);
const OVERFLOW_MESSAGE =
  /maximum context length|context length|too many tokens|context window|context size|prompt is too long|input token count .*exceeds|exceeds the maximum number of tokens|reduce the length of the messages/i;

/**
 * What an HTTP error or an in-stream error means. The body decides where it
 * can (Gemini's bad key is a 400 with reason API_KEY_INVALID, Mistral's
 * unknown model a 400 of type invalid_model); the status where it cannot.
 */
export function classify(failure: AttemptFailure & { kind: "http" | "stream_error" }): ErrorClass {
  const { error } = failure;
  const status = failure.kind === "http" ? failure.status : error.numericCode;
  const codes = [error.code, error.type, error.reason].filter((value): value is string => value !== undefined);
  if (status === 401 || status === 403 || codes.some((code) => AUTH_CODES.has(code)) || (error.status && AUTH_STATUSES.has(error.status))) {
    return "auth";
  }
  if (status === 402 || codes.some((code) => QUOTA_CODES.has(code))) return "quota";
  // Not a 429: a rate limit's message speaks of tokens too ("tokens per min"), and is no overflow.
  const refusal = status === undefined || (status >= 400 && status < 500 && status !== 429);
  if (refusal && (codes.some((code) => OVERFLOW_CODES.has(code)) || (status !== 404 && OVERFLOW_MESSAGE.test(error.message)))) {
    return "context_overflow";
  }
  if (refusal && (codes.some((code) => UNKNOWN_MODEL_CODES.has(code)) || UNKNOWN_MODEL_MESSAGE.test(error.message))) return "unknown_model";
  // Anthropic's unknown model: a 404 not_found_error whose message is "model: <name>".
  if (status === 404 && /^model: \S/.test(error.message)) return "unknown_model";
  if (status === 429 || codes.some((code) => RATE_LIMIT_CODES.has(code)) || error.status === "RESOURCE_EXHAUSTED") return "rate_limit";
  if (status === 404) return "not_found";
  if (status !== undefined && status >= 400 && status < 500 && status !== 408) return "bad_request";
  return "server";
}

export function isQuotaExceeded(failure: AttemptFailure): boolean {
  return (failure.kind === "http" || failure.kind === "stream_error") && classify(failure) === "quota";
}

export function isContextOverflow(failure: AttemptFailure): boolean {
  return (failure.kind === "http" || failure.kind === "stream_error") && classify(failure) === "context_overflow";
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
