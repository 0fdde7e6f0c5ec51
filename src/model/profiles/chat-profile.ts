/**
 * One Chat Completions dialect as data: what an endpoint wants back on the
 * assistant messages of the history, which request fields it takes, and how it
 * streams tool calls. The client reads these fields and has no `if (host === …)`
 * of its own; a new provider is a new object in profiles.ts.
 */
export const PROFILE_NAMES = [
  "openai",
  "deepseek",
  "gemini",
  "mistral",
  "groq",
  "openrouter",
  "ollama",
  "llamacpp",
  "vllm",
  "azure",
  "xai",
  "qwen",
  "generic",
] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];
/** What --profile / config `profile` may say: a name, or `auto` to detect it from the base URL. */
export type ProfileChoice = ProfileName | "auto";

/** An assistant-message field the endpoint needs to see again, and on which messages. */
export interface EchoedField {
  field: string;
  /** `tool_calls`: only on messages that made tool calls (DeepSeek's thinking round trip); `always`: wherever it was received. */
  on: "tool_calls" | "always";
}

export interface ChatProfile {
  readonly name: ProfileName;
  /** The provider, as the docs' table names it. */
  readonly title: string;
  /** Host names (or their parent domains) that select this profile when no profile is named. */
  readonly hosts: readonly string[];
  /** A local server's usual port, for `localhost`/`127.0.0.1` URLs. */
  readonly ports?: readonly number[];
  /** Whether the endpoint takes `stream_options: {include_usage: true}` (Mistral answers 422 to it). */
  readonly streamOptions: boolean;
  /** Fields of a received assistant message sent back on it in later requests. */
  readonly echoMessage: readonly EchoedField[];
  /** Fields of a received tool call sent back on it (Gemini's `extra_content` thought signature). */
  readonly echoToolCall: readonly string[];
  /**
   * How streamed tool-call deltas are told apart. `index`: by their `index`
   * (a delta without one continues the last call unless it brings a new id);
   * `name-starts-call`: a delta that names a function starts a new call (Gemini
   * streams each parallel call whole, without `index` and with an empty id).
   */
  readonly toolCallDeltas: "index" | "name-starts-call";
  /** The request field that caps the answer's length (OpenAI's reasoning models refuse `max_tokens`). */
  readonly maxTokensField: "max_tokens" | "max_completion_tokens";
  /** A header the key is also sent in (Azure's `api-key`), besides `Authorization: Bearer`. */
  readonly keyHeader?: string;
}
