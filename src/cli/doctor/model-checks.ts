import { type Settings, modelClientOptions } from "../../config/load.ts";
import { EmptyModelAnswerError, ModelError } from "../../core/errors.ts";
import { THINKING_FORMS, lookupModel, thinkingFormOf } from "../../model/catalogue/catalogue.ts";
import { createModelClient } from "../../model/factory.ts";
import { resolveProfile } from "../../model/profiles/detect.ts";
import { detectProvider } from "../../model/providers/provider.ts";
import { priceOf } from "../../usage/cost.ts";
import type { ModelPrice } from "../../usage/pricing.ts";
import { type Check, fail, ok, skip } from "./checks.ts";

// The model's part of `agent doctor`: which dialect requests go in, what the
// catalogue knows of the model, and one real request end to end.

const PROTOCOLS = { "openai-responses": "OpenAI Responses API", anthropic: "Anthropic Messages API" } as const;

/**
 * The Chat Completions dialect requests will be sent in, and why that one; for
 * another protocol (--provider), that protocol instead, as a `provider` check.
 */
export function checkProfile(settings: Settings): Check {
  const detected = `detected from ${settings.baseUrl ? hostOf(settings.baseUrl) : "the default endpoint"}`;
  if (settings.provider !== "openai") {
    const why = detectProvider(settings.baseUrl) === settings.provider ? detected : "as configured";
    return ok("provider", `${settings.provider} (${PROTOCOLS[settings.provider]}; ${why})`);
  }
  const profile = resolveProfile(settings.profile, settings.baseUrl);
  const why = settings.profile === "auto" ? detected : "as configured";
  return ok("profile", `${profile.name} (${profile.title}; ${why})`);
}

/**
 * What the model catalogue (or config pricing) knows of the model: its window,
 * output limit, thinking form, prices (a long-context tier too), where they
 * were read and when, and a shutdown announced for it.
 */
export function checkModelInfo(settings: Settings): Check {
  const known = lookupModel(settings.model);
  const price = priceOf(settings.pricing, settings.model);
  const from = settings.pricing[settings.model] ? "config pricing" : known ? `model catalogue: ${known.source}, read ${known.checked}` : "";
  const priced = price ? `${pricesLine(price)} (${from})` : "unknown price: results say total_cost_usd null with a cost_note; add it to config pricing for a cost";
  const form = known ? thinkingFormOf(known) : undefined;
  const thinking = form ? THINKING_FORMS[form].says : "no thinking";
  const limits = known ? `context window ${known.contextWindow} tokens, output up to ${known.maxOutputTokens}, ${thinking}; ` : "not in the model catalogue; ";
  const deprecated = known?.deprecated ? `; deprecated: shut down from ${known.deprecated.shutdown}${known.deprecated.replacement ? `, use ${known.deprecated.replacement}` : ""}` : "";
  if (!price && settings.maxBudgetUsd !== undefined) {
    return fail("model_info", `${settings.model}: ${limits}unknown price, and a budget needs one: add it to config pricing${deprecated}`);
  }
  return ok("model_info", `${settings.model}: ${limits}${priced}${deprecated}`);
}

/** A price as one line: input and output, then the cache's and a long-context tier's rates where there are. */
function pricesLine(price: ModelPrice): string {
  const parts = [`$${price.input_per_mtok} in / $${price.output_per_mtok} out per million tokens`];
  if (price.cached_input_per_mtok !== undefined) parts.push(`cached $${price.cached_input_per_mtok}`);
  if (price.cache_write_per_mtok !== undefined) parts.push(`cache writes $${price.cache_write_per_mtok}`);
  const long = price.long_context;
  if (long) parts.push(`above ${long.above_input_tokens} input tokens $${long.input_per_mtok} in / $${long.output_per_mtok} out`);
  return parts.join(", ");
}

/** The answer cap of the check request: enough for "OK", a few cents' worth on no model. */
const CHECK_TOKENS = 16;

/**
 * One real request of at most CHECK_TOKENS output tokens, through the same
 * client, adapter and profile a run uses: what a models list cannot show (the
 * model answers, the dialect is right). Only when the endpoint and key passed.
 */
export async function checkCompletion(settings: Settings, before: Check[], offline: boolean, timeoutMs: number): Promise<Check> {
  if (offline) return skip("completion", "no request made (--offline)");
  const failed = before.find((check) => check.status === "fail");
  if (failed) return skip("completion", `not tried: the ${failed.id.replace(/_/g, " ")} check failed`);
  const client = createModelClient({ ...modelClientOptions(settings), recordPath: undefined, replayPath: undefined, timeoutMs, maxRetries: 0 });
  const started = performance.now();
  const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  try {
    const answer = await client.complete({
      identity: "doctor",
      messages: [{ role: "user", content: "Reply with the word OK." }],
      tools: [],
      maxTokens: CHECK_TOKENS,
    });
    return ok("completion", `${settings.model} answered a ${CHECK_TOKENS}-token request in ${took()} (${answer.usage.inputTokens} tokens in, ${answer.usage.outputTokens} out)`);
  } catch (error) {
    // A reasoning model may spend the whole cap thinking: it answered all the same.
    if (error instanceof EmptyModelAnswerError) return ok("completion", `${settings.model} answered in ${took()} (no text within the ${CHECK_TOKENS}-token cap)`);
    if (error instanceof ModelError) return fail("completion", error.message);
    throw error;
  } finally {
    await client.close();
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
