import { authHeaders, modelsUrl } from "./providers/endpoints.ts";
import type { ProviderName } from "./providers/provider.ts";

// `GET <base-url>/models`: the cheapest request an OpenAI-compatible endpoint
// answers. It shows whether the endpoint is there, whether it speaks the API and
// whether it takes the key, without spending a token. (`agent doctor`.)

export type ModelListResult =
  | { kind: "ok"; models: string[] }
  /** No HTTP answer: refused, unknown host, timeout. */
  | { kind: "unreachable"; detail: string }
  /** An HTTP answer other than the list: 401/403 (the key), 404 (not the API root), … */
  | { kind: "http"; status: number; detail: string }
  /** 200, but not a model list: something else lives at that URL. */
  | { kind: "not_api"; detail: string };

export interface ListModelsOptions {
  baseUrl?: string;
  /** Without a key the request goes unauthenticated: still enough to see the endpoint answer. */
  apiKey?: string;
  timeoutMs: number;
  /** Whose list (Anthropic's is at /v1/models, with its own key header); `openai` when absent. */
  provider?: ProviderName;
  /** Azure OpenAI's `api-version` query parameter. */
  apiVersion?: string;
}

export async function listModels({ baseUrl, apiKey, timeoutMs, provider = "openai", apiVersion }: ListModelsOptions): Promise<ModelListResult> {
  const url = modelsUrl(provider, baseUrl, apiVersion);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/json", ...(apiKey ? authHeaders(provider, apiKey) : {}) },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "follow",
    });
  } catch (error) {
    const name = (error as Error).name;
    return { kind: "unreachable", detail: name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : (error as Error).message };
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) return { kind: "http", status: response.status, detail: errorMessage(text) ?? response.statusText };
  try {
    const body = JSON.parse(text) as { data?: unknown };
    if (Array.isArray(body.data)) {
      return { kind: "ok", models: body.data.flatMap((m) => (typeof (m as { id?: unknown })?.id === "string" ? [(m as { id: string }).id] : [])) };
    }
  } catch {
    // Not JSON: reported below.
  }
  return { kind: "not_api", detail: `${url} answered 200 but not with a model list (${text.slice(0, 60).replace(/\s+/g, " ")}…)` };
}

/** The `error.message` of an OpenAI-style error body, if it is one. */
function errorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return text.trim().slice(0, 120) || undefined;
  }
}
