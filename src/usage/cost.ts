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
 * Anthropic adapter both) and are priced at their own rates.
 */
export function costUsd(pricing: Pricing, model: string, usage: Usage): number | undefined {
  const price = priceOf(pricing, model);
  if (price === undefined) return undefined;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const written = Math.min(usage.cacheWriteInputTokens ?? 0, usage.inputTokens - cached);
  const fresh = usage.inputTokens - cached - written;
  const cachedRate = price.cached_input_per_mtok ?? price.input_per_mtok;
  const writeRate = price.cache_write_per_mtok ?? price.input_per_mtok;
  return (fresh * price.input_per_mtok + cached * cachedRate + written * writeRate + usage.outputTokens * price.output_per_mtok) / PER_MTOK;
}

/** Dollars as the output shows them: rounded to a millionth, so sums print without float noise. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
