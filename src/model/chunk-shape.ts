/**
 * A streamed `chat.completion.chunk` read without zod when it has the shape
 * nearly every endpoint sends: what `WireChunk.parse` would return for it — the
 * same keys kept, the same stripped — built by hand. Anything else (a part of
 * an unexpected type, a number where text goes) gives undefined, and the
 * caller parses it with the schema, which keeps its one error message. A step's
 * answer is ~10 chunks, and the schema's parse of each cost more than the rest
 * of the step's stream handling.
 */
export interface FastChunk {
  choices?: FastChoice[] | null;
  usage?: FastUsage | null;
}

interface FastChoice {
  delta?: (Record<string, unknown> & { content?: string | Record<string, unknown>[] | null; refusal?: string | null; tool_calls?: FastCallDelta[] | null }) | null;
  finish_reason?: string | null;
}

interface FastCallDelta {
  [key: string]: unknown;
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
}

interface FastUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const nullish = (value: unknown): value is null | undefined => value === null || value === undefined;
const textOrNullish = (value: unknown): boolean => nullish(value) || typeof value === "string";
const numberOrNullish = (value: unknown): boolean => nullish(value) || typeof value === "number";

/** Copies the keys of `from` that `keys` names and `from` has (a z.object's output: unknown keys dropped). */
function pick(from: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const key of keys) if (key in from) out[key] = from[key];
  return out;
}

export function fastChunk(json: unknown): FastChunk | undefined {
  if (!isObject(json)) return undefined;
  const out: FastChunk = {};
  if ("choices" in json) {
    const choices = json.choices;
    if (nullish(choices)) out.choices = choices;
    else if (!Array.isArray(choices)) return undefined;
    else {
      const read: FastChoice[] = [];
      for (const choice of choices) {
        const one = fastChoice(choice);
        if (!one) return undefined;
        read.push(one);
      }
      out.choices = read;
    }
  }
  if ("usage" in json) {
    const usage = fastUsage(json.usage);
    if (usage === false) return undefined;
    out.usage = usage;
  }
  return out;
}

function fastChoice(choice: unknown): FastChoice | undefined {
  if (!isObject(choice) || !textOrNullish(choice.finish_reason)) return undefined;
  const out = pick(choice, ["finish_reason"]) as FastChoice;
  if (!("delta" in choice)) return out;
  const delta = choice.delta;
  if (nullish(delta)) {
    out.delta = delta;
    return out;
  }
  if (!isObject(delta) || !textOrNullish(delta.refusal)) return undefined;
  const content = delta.content;
  if (!textOrNullish(content)) {
    // Parts (Mistral's reasoning models): each an object whose type, if any, is text.
    if (!Array.isArray(content) || !content.every((part) => isObject(part) && textOrNullish(part.type))) return undefined;
  }
  // A loose object: every key kept, the known ones checked.
  const kept: Json = { ...delta };
  if ("tool_calls" in delta && !nullish(delta.tool_calls)) {
    if (!Array.isArray(delta.tool_calls)) return undefined;
    const calls: FastCallDelta[] = [];
    for (const call of delta.tool_calls) {
      if (!isObject(call) || !textOrNullish(call.id)) return undefined;
      const index = call.index;
      if (!nullish(index) && !(typeof index === "number" && Number.isInteger(index) && index >= 0)) return undefined;
      const one: FastCallDelta = { ...call };
      if ("function" in call && !nullish(call.function)) {
        const fn = call.function;
        if (!isObject(fn) || !textOrNullish(fn.name) || !textOrNullish(fn.arguments)) return undefined;
        one.function = pick(fn, ["name", "arguments"]) as FastCallDelta["function"];
      }
      calls.push(one);
    }
    kept.tool_calls = calls;
  }
  out.delta = kept as FastChoice["delta"];
  return out;
}

/** The usage as the schema reads it; false when it is not of its shape. */
function fastUsage(usage: unknown): FastUsage | null | undefined | false {
  if (nullish(usage)) return usage;
  if (!isObject(usage) || !numberOrNullish(usage.prompt_tokens) || !numberOrNullish(usage.completion_tokens)) return false;
  const out = pick(usage, ["prompt_tokens", "completion_tokens"]) as FastUsage;
  if ("prompt_tokens_details" in usage) {
    const details = usage.prompt_tokens_details;
    if (nullish(details)) out.prompt_tokens_details = details;
    else if (!isObject(details) || !numberOrNullish(details.cached_tokens)) return false;
    else out.prompt_tokens_details = pick(details, ["cached_tokens"]);
  }
  return out;
}
