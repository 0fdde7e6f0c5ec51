import { APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { AttemptFailure, ConnectionReason } from "./endpoint-errors.ts";
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
  if (error instanceof StreamErrorEventError) return { kind: "stream_error", error: error.error, cause: error };
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

const TLS_CODE = /^(EPROTO|ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|TLS)/;

/**
 * Our own words for the innermost cause's code. The runtime's message is left
 * out on purpose: Bun's says "Is the computer able to access the url?" or
 * "pass `verbose: true` to fetch()", which is advice for its developers, not ours.
 */
export function connectionFailure(error: unknown): { reason: ConnectionReason; detail: string } {
  const code = innermostCode(error);
  switch (code) {
    case "ECONNREFUSED":
    case "ConnectionRefused":
      return { reason: "refused", detail: "connection refused" };
    case "ECONNRESET":
    case "ConnectionReset":
      return { reason: "reset", detail: "connection reset" };
    case "EPIPE":
    case "ConnectionClosed":
    case "UND_ERR_SOCKET":
    case "ERR_STREAM_PREMATURE_CLOSE":
      return { reason: "closed", detail: "the connection was closed" };
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "DNSException":
      return { reason: "dns", detail: "host not found" };
    case "ETIMEDOUT":
    case "TimeoutError":
      return { reason: "timeout", detail: "timed out" };
    case undefined:
      return { reason: "other", detail: "connection failed" };
  }
  if (TLS_CODE.test(code)) return { reason: "tls", detail: `TLS handshake failed (${code})` };
  return { reason: "other", detail: `connection failed (${code})` };
}

function innermostCode(error: unknown): string | undefined {
  let code: string | undefined;
  for (let inner = error; inner instanceof Error; inner = inner.cause) {
    const found = (inner as { code?: unknown }).code;
    if (typeof found === "string" && found.length > 0) code = found;
  }
  return code;
}

/** The SDK's own message, for a body with none: without the status it prefixes, which our errors already name. */
function sdkMessage(error: APIError): string {
  return oneLine(error.message.replace(/^\d{3}\s*/, "").replace(/^status code \(no body\)$/, ""));
}
