import catalogue from "./models.json" with { type: "json" };

/**
 * A higher price for a request whose input (cached tokens included) is above
 * `above_input_tokens`: the whole request, input and output, is priced at these
 * rates (OpenAI's GPT-5.4 above 272K, Gemini's Pro models above 200K). A rate
 * left out keeps the base rate.
 */
export interface LongContextPrice {
  above_input_tokens: number;
  input_per_mtok: number;
  output_per_mtok: number;
  cached_input_per_mtok?: number;
  cache_write_per_mtok?: number;
}

/** What one model costs, US dollars per million tokens: the shape of config `pricing`'s entries too. */
export interface CataloguePrice {
  input_per_mtok: number;
  output_per_mtok: number;
  /** Cached input tokens; priced as plain input when absent. */
  cached_input_per_mtok?: number;
  /** Input tokens written to the prompt cache; priced as plain input when absent. */
  cache_write_per_mtok?: number;
  long_context?: LongContextPrice;
}

/**
 * How a reasoning model is asked to think, and so what our request carries for it.
 * Only Anthropic's two forms put anything in the request (the Anthropic adapter's
 * `thinking` parameter); for the others the adapters send no thinking parameter and
 * the model thinks as its provider's default says, its reasoning carried back as
 * each dialect needs (Responses reasoning items, DeepSeek's reasoning_content,
 * Gemini's thought signatures).
 */
export const THINKING_FORMS = {
  budgeted: { sent: true, says: "thinking with a budget" },
  adaptive: { sent: true, says: "thinking adaptive" },
  effort: { sent: false, says: "reasoning effort (OpenAI reasoning.effort; none sent: the model's default effort)" },
  dynamic: { sent: false, says: "thinking budget (Gemini 2.5 thinking_budget; none sent: dynamic thinking)" },
  level: { sent: false, says: "thinking level (Gemini thinking_level; none sent: the model's dynamic default)" },
  toggle: { sent: false, says: "thinking mode on by default (DeepSeek thinking {type}; none sent)" },
  always: { sent: false, says: "always reasons (xAI: no reasoning parameter taken)" },
} as const;
export type ThinkingForm = keyof typeof THINKING_FORMS;

/** A model its provider has announced it will shut down (the ones already shut down are not in the catalogue). */
export interface Deprecation {
  /** The announced shutdown date (YYYY-MM-DD); for some providers the earliest one. */
  shutdown: string;
  replacement?: string;
  /** The provider's deprecations page. */
  source: string;
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
   * How a reasoning model takes thinking (THINKING_FORMS). Absent on a
   * reasoning model: `budgeted` (the Anthropic rows written before the others had one).
   */
  thinking?: ThinkingForm;
  /** Absent where no official price was found: the cost is then unknown, never 0. */
  price?: CataloguePrice;
  /** The page the figures were read from. */
  source: string;
  /** When they were read (YYYY-MM or YYYY-MM-DD). */
  checked: string;
  deprecated?: Deprecation;
}

/**
 * The model catalogue shipped in the binary (models.json, bundled by the
 * import): context windows, output limits and list prices, so cost, budgets
 * and compaction work for known models without any config. The first entry
 * whose pattern matches wins, so the more specific ids come first.
 */
export const MODEL_CATALOGUE = {
  /** When the catalogue was last checked against the providers' pages (each entry has its own date). */
  checked: catalogue.checked,
  models: catalogue.models as ModelInfo[],
};

/** The thinking form a model takes: its own, or `budgeted` for a reasoning model that names none. */
export function thinkingFormOf(info: ModelInfo): ThinkingForm | undefined {
  if (!info.reasoning) return undefined;
  return info.thinking ?? "budgeted";
}

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
