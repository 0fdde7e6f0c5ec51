import { APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { connectionFailure } from "./connection-failure.ts";
import type { AttemptFailure } from "./endpoint-errors.ts";
import { parseErrorBody, providerErrorFrom } from "./error-body.ts";
import { StreamIdleError } from "./sse.ts";
import { StreamCutError, StreamErrorEventError } from "./stream-assembler.ts";
import { EmptyCompletionError, InvalidCompletionError, oneLine } from "./wire-completion.ts";

/**
 * Tells the retry loop what went wrong with one attempt, from what the openai
 * SDK, Bun's fetch or our own stream reading threw. Part of the OpenAI adapter:
 * the SDK's error classes are read here and nowhere else.
 */
export function describeAttemptFailure(error: unknown, signal: AbortSignal): AttemptFailure {
  if (signal.aborted || error instanceof APIUserAbortError) return { kind: "aborted" };
  if (error instanceof EmptyCompletionError) return { kind: "empty" };
  if (error instanceof InvalidCompletionError) {
    return { kind: "invalid_response", detail: error.detail, firstBytes: error.firstBytes, cause: error };
  }
  if (error instanceof StreamCutError) return { kind: "connection", reason: "cut", detail: error.message, cause: error };
  if (error instanceof StreamErrorEventError) return { kind: "stream_error", error: error.error, afterText: error.afterText, cause: error };
  if (error instanceof APIConnectionTimeoutError || error instanceof StreamIdleError) {
    return { kind: "connection", reason: "timeout", detail: "timed out", cause: error };
  }
  if (error instanceof APIError && error.status !== undefined) {
    // errorShapingFetch gave every error body OpenAI's shape, so `error.error` is a ProviderError.
    const body = providerErrorFrom(error.error) ?? parseErrorBody(error.error) ?? { message: "" };
    return { kind: "http", status: error.status, error: { ...body, message: body.message || sdkMessage(error) }, headers: error.headers, cause: error };
  }
  // The SDK's "Connection error.", or fetch failing while the body streams in.
  const { reason, detail } = connectionFailure(error);
  return { kind: "connection", reason, detail, cause: error };
}

/** The SDK's own message, for a body with none: without the status it prefixes, which our errors already name. */
function sdkMessage(error: APIError): string {
  return oneLine(error.message.replace(/^\d{3}\s*/, "").replace(/^status code \(no body\)$/, ""));
}
