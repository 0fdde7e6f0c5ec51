import { parseBaseUrl } from "../core/values.ts";
import { MissingApiKeyError, UsageError } from "../core/errors.ts";
import { RecordingModelClient, ReplayModelClient } from "./cassette.ts";
import { lookupModel } from "./catalogue/catalogue.ts";
import { LazyModelClient } from "./lazy-client.ts";
import { OpenAIModelClient } from "./openai-client.ts";
import { resolveProfile } from "./profiles/detect.ts";
import type { RetryDeps, RetryTiming } from "./retry.ts";
import { KEY_VARIABLES } from "./providers/provider.ts";
import type { ModelClient, ModelClientOptions } from "./types.ts";

/** What tests (and benchmarks) may swap in; production passes nothing. */
export interface ModelClientOverrides {
  retryTiming?: Partial<RetryTiming>;
  retryDeps?: Partial<RetryDeps>;
}

/**
 * The one way the runtime gets a model client. Replay needs no key and no
 * network; otherwise a key is required, and recording wraps the live client.
 */
export function createModelClient(options: ModelClientOptions, overrides: ModelClientOverrides = {}): ModelClient {
  if (options.replayPath !== undefined && options.recordPath !== undefined) {
    throw new UsageError("--record and --replay cannot be used together: record once, then replay that file");
  }
  if (options.replayPath !== undefined) return new ReplayModelClient(options.replayPath, options.model);
  if (!options.apiKey) throw new MissingApiKeyError(KEY_VARIABLES[options.provider ?? "openai"]);
  // The CLI has checked it already, naming its source; this guards every other caller.
  if (options.baseUrl !== undefined) parseBaseUrl(options.baseUrl, { flag: "--base-url" });
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new UsageError(`invalid model timeout ${options.timeoutMs} ms: use a positive duration such as 120s`);
  }
  if (options.maxRetries !== undefined && !(Number.isInteger(options.maxRetries) && options.maxRetries >= 0)) {
    throw new UsageError(`invalid maxRetries ${options.maxRetries}: use a whole number, 0 or more`);
  }
  const live = liveClient({ ...options, apiKey: options.apiKey }, overrides);
  return options.recordPath === undefined ? live : new RecordingModelClient(live, options.recordPath);
}

/** The adapter of the provider (its wire protocol); the ones beside Chat Completions are loaded on first use. */
function liveClient(options: ModelClientOptions & { apiKey: string }, overrides: ModelClientOverrides): ModelClient {
  const common = {
    model: options.model,
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    apiVersion: options.apiVersion,
    headers: options.headers,
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    onRetry: options.onRetry,
    retryTiming: overrides.retryTiming,
    retryDeps: overrides.retryDeps,
    maxOutputTokens: (model: string) => lookupModel(model)?.maxOutputTokens,
  };
  switch (options.provider ?? "openai") {
    case "openai":
      return new OpenAIModelClient({ ...common, profile: resolveProfile(options.profile, options.baseUrl) });
    case "openai-responses":
      return new LazyModelClient(options.model, async () => {
        const { ResponsesModelClient } = await import("./responses/responses-client.ts");
        return new ResponsesModelClient({ ...common, reasons: (model) => lookupModel(model)?.reasoning });
      });
    case "anthropic":
      return new LazyModelClient(options.model, async () => {
        const { AnthropicModelClient } = await import("./anthropic/anthropic-client.ts");
        return new AnthropicModelClient({
          ...common,
          reasons: (model) => lookupModel(model)?.reasoning ?? false,
          adaptive: (model) => lookupModel(model)?.thinking === "adaptive",
        });
      });
  }
}
