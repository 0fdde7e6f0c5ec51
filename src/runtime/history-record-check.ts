import { UTC_INSTANT, hasExactly, isFilled, isPlainRecord } from "../core/plain-check.ts";
import type { ChatMessage } from "../model/types.ts";
import { plainUsageRecord } from "../usage/usage-record-check.ts";
import type { HistoryRecord } from "./history-store.ts";
import { RUN_SUBTYPES } from "./run-types.ts";

const STATUSES: readonly unknown[] = ["started", "interrupted", "finished"];
const SUBTYPES: readonly unknown[] = RUN_SUBTYPES;

/**
 * The history record as it is when HistoryRecord.parse would return it
 * unchanged — a message, a turn's mark, a usage record (what every step
 * appends), a snapshot — checked without zod; undefined for anything else (keys
 * in another order, a value the schema would refuse), which the caller gives
 * the schema and its error message. Each append checks its records before they
 * are written and kept (in a team of 32 the schema's parse cost 10–45 µs a
 * record, more than the rest of the append's CPU), and each read checks what it
 * reads (the schema cost 8–9× the JSON.parse of a resumed history).
 * `test/runtime/history-record-check.test.ts` runs both over the same inputs.
 */
export function plainHistoryRecord(value: unknown): HistoryRecord | undefined {
  if (!isPlainRecord(value) || value.v !== 1 || typeof value.at !== "string" || !UTC_INSTANT.test(value.at)) return undefined;
  switch (value.type) {
    case "message":
      return hasExactly(value, ["v", "type", "at", "message"]) && isPlainMessage(value.message) ? (value as HistoryRecord) : undefined;
    case "turn":
      if (!hasExactly(value, ["v", "type", "at", "key", "status", "subtype", "result", "joins"], ["subtype", "result", "joins"])) return undefined;
      if (!isFilled(value.key) || !STATUSES.includes(value.status)) return undefined;
      if (value.subtype !== undefined && !SUBTYPES.includes(value.subtype)) return undefined;
      if (value.result !== undefined && typeof value.result !== "string") return undefined;
      if (value.joins !== undefined && !isFilled(value.joins)) return undefined;
      return value as HistoryRecord;
    case "usage":
      return hasExactly(value, ["v", "type", "at", "record"]) && plainUsageRecord(value.record) !== undefined ? (value as HistoryRecord) : undefined;
    case "snapshot":
      return hasExactly(value, ["v", "type", "at", "messages"]) && isEvery(value.messages, isPlainMessage) ? (value as HistoryRecord) : undefined;
    default:
      return undefined;
  }
}

/**
 * The chat message as it is when ChatMessage.parse would return it unchanged,
 * checked without zod; undefined for anything else (the schema's to judge). A
 * new session's first prompt, sent ahead, is checked this way: the schema's
 * first parse (building it) cost 4–7 ms before that request went out.
 */
export function plainChatMessage(value: unknown): ChatMessage | undefined {
  return isPlainMessage(value) ? value : undefined;
}

function isPlainMessage(value: unknown): value is ChatMessage {
  if (!isPlainRecord(value)) return false;
  switch (value.role) {
    case "system":
    case "user":
      return hasExactly(value, ["role", "content"]) && typeof value.content === "string";
    case "assistant":
      if (!hasExactly(value, ["role", "content", "toolCalls", "extra"], ["toolCalls", "extra"])) return false;
      if (value.content !== null && typeof value.content !== "string") return false;
      if (value.extra !== undefined && !isExtra(value.extra)) return false;
      return value.toolCalls === undefined || isEvery(value.toolCalls, isPlainToolCall);
    case "tool":
      if (!hasExactly(value, ["role", "toolCallId", "content", "isError"], ["isError"])) return false;
      return isFilled(value.toolCallId) && typeof value.content === "string" && (value.isError === undefined || typeof value.isError === "boolean");
    default:
      return false;
  }
}

/** An array whose every element passes `check`; a hole (which `every` would skip) is refused, as zod refuses it. */
function isEvery(value: unknown, check: (item: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
  return true;
}

function isPlainToolCall(value: unknown): boolean {
  if (!isPlainRecord(value) || !hasExactly(value, ["id", "name", "arguments", "extra"], ["extra"])) return false;
  return isFilled(value.id) && isFilled(value.name) && typeof value.arguments === "string" && (value.extra === undefined || isExtra(value.extra));
}

/** An endpoint's extra fields (WireExtra: any string-keyed record): a plain object, whatever it holds. */
function isExtra(value: unknown): boolean {
  return isPlainRecord(value) && Object.getPrototypeOf(value) === Object.prototype;
}
