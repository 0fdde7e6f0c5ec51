import { lookupModel } from "../model/catalogue/catalogue.ts";
import type { Usage } from "../model/types.ts";
import type { ModelPrice, Pricing } from "./pricing.ts";

// Kept apart from the schema in pricing.ts: the result's code needs the sums, not zod.

const PER_MTOK = 1_000_000;

/**
 * The price of `model`: config `pricing`'s entry for that exact name first,
 * else the shipped catalogue's (src/model/catalogue/); undefined when neither
 * knows it.
 */
export function priceOf(pricing: Pricing, model: string): ModelPrice | undefined {
  return pricing[model] ?? lookupModel(model)?.price;
}

/**
 * The cost of `usage` on `model`, or undefined when it has no price: no price
 * is no figure, never a guess. Cached tokens and tokens written to the cache
 * are part of the input count (as the OpenAI API reports the first, and our
 * Anthropic adapter both) and are priced at their own rates. `usage` is one
 * request's: a long-context tier prices the whole request whose input is
 * above its threshold, as the providers bill it.
 */
export function costUsd(pricing: Pricing, model: string, usage: Usage): number | undefined {
  const price = priceOf(pricing, model);
  if (price === undefined) return undefined;
  const rates = ratesFor(price, usage.inputTokens);
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const written = Math.min(usage.cacheWriteInputTokens ?? 0, usage.inputTokens - cached);
  const fresh = usage.inputTokens - cached - written;
  const cachedRate = rates.cached_input_per_mtok ?? rates.input_per_mtok;
  const writeRate = rates.cache_write_per_mtok ?? rates.input_per_mtok;
  return (fresh * rates.input_per_mtok + cached * cachedRate + written * writeRate + usage.outputTokens * rates.output_per_mtok) / PER_MTOK;
}

/** The rates a request of `inputTokens` is billed at: the long-context tier's above its threshold. */
function ratesFor(price: ModelPrice, inputTokens: number): Omit<ModelPrice, "long_context"> {
  const { long_context: long, ...base } = price;
  if (long === undefined || inputTokens <= long.above_input_tokens) return base;
  const { above_input_tokens: _threshold, ...higher } = long;
  return { ...base, ...higher };
}

/** Dollars as the output shows them: rounded to a millionth, so sums print without float noise. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
