/**
 * The wire protocol requests go out in: one adapter per protocol behind the
 * one ModelClient interface (src/model/types.ts). `openai` is Chat Completions,
 * whose dialects are the profiles (src/model/profiles/); the other two are
 * protocols of their own. Kept free of imports so config loading can name the
 * choices without loading an adapter.
 */
export const PROVIDER_NAMES = ["openai", "openai-responses", "anthropic"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Hosts whose protocol is not Chat Completions: the provider a base URL on them calls for. */
const PROVIDER_HOSTS: ReadonlyArray<{ host: string; provider: ProviderName }> = [{ host: "api.anthropic.com", provider: "anthropic" }];

/** The key's environment variable for each provider: what errors tell the user to check. */
export const KEY_VARIABLES: Readonly<Record<ProviderName, string>> = {
  openai: "OPENAI_API_KEY",
  "openai-responses": "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
};

export function isProviderName(name: string): name is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(name);
}

/** The provider a base URL's host calls for; `openai` (Chat Completions) for any host not listed, and without a URL. */
export function detectProvider(baseUrl: string | undefined): ProviderName {
  if (baseUrl === undefined) return "openai";
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return "openai";
  }
  return PROVIDER_HOSTS.find((known) => host === known.host || host.endsWith(`.${known.host}`))?.provider ?? "openai";
}
