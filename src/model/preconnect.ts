import { defaultBaseUrl } from "./providers/endpoints.ts";
import type { ModelClientOptions } from "./types.ts";

/** The variables that send fetch through a proxy: a connection made straight to the endpoint would not be the one used. */
const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/**
 * Opens the connection to the model's endpoint (DNS, TCP, TLS) while the run
 * sets up its session, so its first request finds it open: for an HTTPS API
 * the handshake is often longer than everything before the first request.
 * Nothing is sent. Not for a replayed run (no network) or when a proxy is
 * configured (the request would not use this connection). Returns whether a
 * connection was asked for; one that fails is the first request's to report.
 */
export function preconnectModel(options: Pick<ModelClientOptions, "baseUrl" | "provider" | "replayPath">, env: Record<string, string | undefined>): boolean {
  if (options.replayPath !== undefined) return false;
  if (PROXY_VARIABLES.some((name) => (env[name] ?? "") !== "")) return false;
  const root = options.baseUrl ?? defaultBaseUrl(options.provider ?? "openai");
  try {
    fetch.preconnect(root);
    return true;
  } catch {
    // A URL fetch cannot use: the client's own checks name what is wrong with it.
    return false;
  }
}
