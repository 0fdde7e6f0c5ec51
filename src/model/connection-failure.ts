import type { ConnectionReason } from "./endpoint-errors.ts";

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
