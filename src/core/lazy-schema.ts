import { z } from "zod";

// zod parses without compiling code: by default it compiles a parser for each object
// schema on its first parse (`new Function`), which a process parsing each schema a
// few times never earns back. A one-call run spent 7–10 ms less CPU without it (median
// of 20, alternated), and a harness step was no slower (bench/harness.ts). Set here,
// before any schema is built (an object schema reads it when it is built), since every
// module's schemas are built through lazySchema.
z.config({ jitless: true });

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
