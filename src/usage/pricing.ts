import { z } from "zod";
import type { Usage } from "../model/types.ts";

/** What one model costs, in US dollars per million tokens (config `pricing`). */
export const ModelPrice = z.strictObject({
  input_per_mtok: z.number().nonnegative(),
  output_per_mtok: z.number().nonnegative(),
  /** Cached input tokens; priced as plain input when absent. */
  cached_input_per_mtok: z.number().nonnegative().optional(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/** Prices by model name, exactly as the model is named in requests. */
export const Pricing = z.record(z.string().min(1), ModelPrice);
export type Pricing = z.infer<typeof Pricing>;

const PER_MTOK = 1_000_000;

/**
 * The cost of `usage` on `model`, or undefined when the table has no price for
 * it: no price is no figure, never a guess. Cached tokens are part of the input
 * count (as the OpenAI API reports them) and are priced at the cached rate.
 */
export function costUsd(pricing: Pricing, model: string, usage: Usage): number | undefined {
  const price = pricing[model];
  if (price === undefined) return undefined;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const cachedRate = price.cached_input_per_mtok ?? price.input_per_mtok;
  return (fresh * price.input_per_mtok + cached * cachedRate + usage.outputTokens * price.output_per_mtok) / PER_MTOK;
}

/** Dollars as the output shows them: rounded to a millionth, so sums print without float noise. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
