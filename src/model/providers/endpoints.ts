import type { ProviderName } from "./provider.ts";

// Where each provider's requests go and how they are authenticated, for the
// adapters and for `agent doctor`'s models-list check alike.

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
/** The API version every Anthropic request names (the one the Messages API, tools and thinking are documented under). */
export const ANTHROPIC_VERSION = "2023-06-01";

export function defaultBaseUrl(provider: ProviderName): string {
  return provider === "anthropic" ? ANTHROPIC_DEFAULT_BASE_URL : OPENAI_DEFAULT_BASE_URL;
}

/** An Anthropic API path under the root; a root given with its /v1 (as OpenAI's are) is taken as such. */
export function anthropicUrl(baseUrl: string, path: "messages" | "models"): string {
  const root = baseUrl.replace(/\/+$/, "");
  return /\/v1$/.test(root) ? `${root}/${path}` : `${root}/v1/${path}`;
}

/** The key as the provider wants it: Anthropic's `x-api-key` and version, else a bearer token. */
export function authHeaders(provider: ProviderName, apiKey: string): Record<string, string> {
  return provider === "anthropic" ? { "x-api-key": apiKey, "anthropic-version": ANTHROPIC_VERSION } : { authorization: `Bearer ${apiKey}` };
}

/**
 * An OpenAI API path under the base URL, the base URL's query kept after it:
 * Azure's classic deployment URL (`…/openai/deployments/NAME?api-version=…`)
 * names its API version there. `apiVersion` (--api-version, config apiVersion)
 * sets that parameter.
 */
export function openaiUrl(baseUrl: string, path: string, apiVersion?: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${path}`;
  if (apiVersion !== undefined) url.searchParams.set("api-version", apiVersion);
  return url.toString();
}

/** `GET` of the provider's model list (both answer `{"data":[{"id":…}]}`). */
export function modelsUrl(provider: ProviderName, baseUrl: string | undefined, apiVersion?: string): string {
  const root = baseUrl ?? defaultBaseUrl(provider);
  return provider === "anthropic" ? anthropicUrl(root, "models") : openaiUrl(root, "models", apiVersion);
}
