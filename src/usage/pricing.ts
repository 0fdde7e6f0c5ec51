import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.ts";

/** What one model costs, in US dollars per million tokens (config `pricing`). */
export const ModelPrice = lazySchema(() =>
  z.strictObject({
    input_per_mtok: z.number().nonnegative(),
    output_per_mtok: z.number().nonnegative(),
    /** Cached input tokens; priced as plain input when absent. */
    cached_input_per_mtok: z.number().nonnegative().optional(),
    /** Input tokens written to the prompt cache (Anthropic's 5-minute cache); priced as plain input when absent. */
    cache_write_per_mtok: z.number().nonnegative().optional(),
    /**
     * The rates of a request whose input is above `above_input_tokens` (a
     * long-context tier): the whole request is priced at them; a rate left out
     * keeps the one above.
     */
    long_context: z
      .strictObject({
        above_input_tokens: z.number().int().positive(),
        input_per_mtok: z.number().nonnegative(),
        output_per_mtok: z.number().nonnegative(),
        cached_input_per_mtok: z.number().nonnegative().optional(),
        cache_write_per_mtok: z.number().nonnegative().optional(),
      })
      .optional(),
  }),
);
export type ModelPrice = z.infer<typeof ModelPrice>;

/** Prices by model name, exactly as the model is named in requests. */
export const Pricing = lazySchema(() => z.record(z.string().min(1), ModelPrice));
export type Pricing = z.infer<typeof Pricing>;
