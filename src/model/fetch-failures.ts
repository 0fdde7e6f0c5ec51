import { connectionFailure } from "./connection-failure.ts";
import type { AttemptFailure } from "./endpoint-errors.ts";
import type { ProviderError } from "./error-body.ts";
import { StreamIdleError } from "./sse.ts";
import { StreamCutError, StreamErrorEventError } from "./stream-assembler.ts";
import { EmptyCompletionError, InvalidCompletionError } from "./wire-completion.ts";

// What went wrong with one attempt of an adapter that makes its requests with
// fetch itself (no SDK between): the Anthropic one. The SDK-based adapters have
// openai-failures.ts.

/** An HTTP error status, with the error its body held (error-body.ts). */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly error: ProviderError,
    readonly headers: Headers,
  ) {
    super(`HTTP ${status}: ${error.message}`);
  }
}

/** The request timeout ran out before the answer's headers came. */
export class RequestTimeoutError extends Error {}

export function describeFetchFailure(error: unknown, signal: AbortSignal): AttemptFailure {
  if (signal.aborted) return { kind: "aborted" };
  if (error instanceof EmptyCompletionError) return { kind: "empty" };
  if (error instanceof InvalidCompletionError) return { kind: "invalid_response", detail: error.detail, firstBytes: error.firstBytes, cause: error };
  if (error instanceof StreamCutError) return { kind: "connection", reason: "cut", detail: error.message, cause: error };
  if (error instanceof StreamErrorEventError) return { kind: "stream_error", error: error.error, afterText: error.afterText, cause: error };
  if (error instanceof HttpStatusError) return { kind: "http", status: error.status, error: error.error, headers: error.headers, cause: error };
  if (error instanceof RequestTimeoutError || error instanceof StreamIdleError) return { kind: "connection", reason: "timeout", detail: "timed out", cause: error };
  const { reason, detail } = connectionFailure(error);
  return { kind: "connection", reason, detail, cause: error };
}
