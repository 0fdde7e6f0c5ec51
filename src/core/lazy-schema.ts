import { z } from "zod";

/**
 * A schema built on its first use instead of when its module is evaluated.
 *
 * Building zod schemas was most of what evaluating the run's modules cost
 * (~20 ms of the ~60 ms before the first model request: every `z.object`,
 * `.optional()` and `.min()` is an object zod initialises), and most of them are
 * never used by a run: an MCP server's config, a cassette, a tool's input
 * before the model calls it. It is zod's own `z.lazy`, so parsing, composing
 * (`X.optional()`, `z.array(X)`), `z.infer` and the JSON-schema generator all
 * see through it; what only an object schema has (`.shape`, `.extend`) is on
 * `.unwrap()`.
 */
export function lazySchema<T extends z.ZodType>(build: () => T): z.ZodLazy<T> {
  return z.lazy(build);
}
