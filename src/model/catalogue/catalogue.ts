import catalogue from "./models.json" with { type: "json" };

/** What one model costs, US dollars per million tokens: the shape of config `pricing`'s entries too. */
export interface CataloguePrice {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Cached input tokens; priced as plain input when absent. */
  cached_input_per_mtok?: number;
  /** Input tokens written to the prompt cache; priced as plain input when absent. */
  cache_write_per_mtok?: number;
}

/** What the catalogue knows about a model. */
export interface ModelInfo {
  /** A regular expression over the model's id, lower-cased and without a router's `vendor/` prefix. */
  match: string;
  provider: string;
  /** Tokens in and out of one request together. */
  contextWindow: number;
  /** The most tokens one answer may hold. */
  maxOutputTokens: number;
  reasoning: boolean;
  /**
   * How a reasoning model takes thinking: with a budget (absent: `budgeted`), or
   * `adaptive` only (Anthropic's newest, which answer the budgeted form with a 400).
   */
  thinking?: "budgeted" | "adaptive";
  price: CataloguePrice;
}

/**
 * The model catalogue shipped in the binary (models.json, bundled by the
 * import): context windows, output limits and list prices, so cost, budgets
 * and compaction work for known models without any config. The first entry
 * whose pattern matches wins, so the more specific ids come first.
 */
export const MODEL_CATALOGUE = {
  /** When the figures were last checked against the providers' pages. */
  checked: catalogue.checked,
  models: catalogue.models as ModelInfo[],
};

// Compiled on the first lookup: every command's start loads this module (a run's
// result names its cost), and compiling the patterns cost `--version` ~1 ms.
let compiled: { info: ModelInfo; pattern: RegExp }[] | undefined;

/**
 * The catalogue's entry for a model id as requests name it: `gpt-4o-mini-2024-07-18`,
 * OpenRouter's `openai/gpt-4o-mini`, Gemini's `models/gemini-2.5-pro`. Undefined
 * for a model it does not know.
 */
export function lookupModel(id: string): ModelInfo | undefined {
  const bare = id.toLowerCase().slice(id.lastIndexOf("/") + 1);
  compiled ??= MODEL_CATALOGUE.models.map((info) => ({ info, pattern: new RegExp(info.match) }));
  return compiled.find(({ pattern }) => pattern.test(bare))?.info;
}
