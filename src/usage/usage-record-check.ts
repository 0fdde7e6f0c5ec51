import { UTC_INSTANT, hasExactly, isCount, isFilled, isPlainRecord } from "../core/plain-check.ts";
import type { UsageRecord } from "./usage-record.ts";

// In the schema's order (usage-record.ts): zod's output has its keys in it.
const MODEL_CALL = ["v", "type", "id", "at", "agent", "identity", "model", "input_tokens", "output_tokens", "cached_input_tokens", "cache_write_input_tokens", "tool_calls", "duration_ms"] as const;
const MODEL_CALL_OPTIONAL = ["id", "cached_input_tokens", "cache_write_input_tokens"] as const;
const TURN = ["v", "type", "id", "at", "agent", "key", "subtype", "duration_ms"] as const;
const TURN_OPTIONAL = ["id"] as const;

/**
 * The usage record as it is when UsageRecord.parse would return it unchanged —
 * the plain shapes every model call and turn writes — checked without zod;
 * undefined for anything else, which the caller gives the schema (and its error
 * message). Every model call of every agent is checked before it is written: in
 * a team of 32 the schema's parse was a visible part of a step.
 * `test/usage/usage-record-check.test.ts` runs both over the same inputs.
 */
export function plainUsageRecord(value: unknown): UsageRecord | undefined {
  if (!isPlainRecord(value) || value.v !== 1 || typeof value.at !== "string" || !UTC_INSTANT.test(value.at)) return undefined;
  if (value.id !== undefined && !isFilled(value.id)) return undefined;
  if (!isFilled(value.agent) || !isCount(value.duration_ms)) return undefined;
  if (value.type === "model_call") {
    if (!hasExactly(value, MODEL_CALL, MODEL_CALL_OPTIONAL)) return undefined;
    if (!isFilled(value.identity) || !isFilled(value.model)) return undefined;
    if (!isCount(value.input_tokens) || !isCount(value.output_tokens) || !isCount(value.tool_calls)) return undefined;
    if (value.cached_input_tokens !== undefined && !isCount(value.cached_input_tokens)) return undefined;
    if (value.cache_write_input_tokens !== undefined && !isCount(value.cache_write_input_tokens)) return undefined;
    return value as UsageRecord;
  }
  if (value.type === "turn") {
    if (!hasExactly(value, TURN, TURN_OPTIONAL) || !isFilled(value.key) || !isFilled(value.subtype)) return undefined;
    return value as UsageRecord;
  }
  return undefined;
}

// How a usage record with an id begins as the ledger writes it (JSON.stringify, the schema's key order).
const MODEL_CALL_HEAD = '{"v":1,"type":"model_call","id":"';
const TURN_HEAD = '{"v":1,"type":"turn","id":"';

/**
 * The id of the usage record whose JSON begins at `start` of `text`, read from
 * the text without parsing it, when it begins as the ledger writes one;
 * undefined otherwise (no id, an escaped one, another shape). A record with an
 * id a reader already has need not be parsed again.
 */
export function usageRecordIdAt(text: string, start: number): string | undefined {
  const head = text.startsWith(MODEL_CALL_HEAD, start) ? MODEL_CALL_HEAD.length : text.startsWith(TURN_HEAD, start) ? TURN_HEAD.length : 0;
  if (head === 0) return undefined;
  const from = start + head;
  const end = text.indexOf('"', from);
  if (end <= from) return undefined;
  const id = text.slice(from, end);
  return id.includes("\\") || id.includes("\n") ? undefined : id;
}
