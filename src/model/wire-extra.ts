import type { WireExtra } from "./types.ts";

/** The standard fields of an assistant message (or its delta) and of a tool call: everything else is an extra. */
const MESSAGE_FIELDS = new Set(["role", "content", "refusal", "tool_calls", "function_call"]);
const TOOL_CALL_FIELDS = new Set(["index", "id", "type", "function"]);

/** The non-standard, non-null fields of a message or a delta, verbatim. */
export function messageExtras(message: Record<string, unknown>): WireExtra {
  return extras(message, MESSAGE_FIELDS);
}

export function toolCallExtras(call: Record<string, unknown>): WireExtra {
  return extras(call, TOOL_CALL_FIELDS);
}

function extras(object: Record<string, unknown>, standard: ReadonlySet<string>): WireExtra {
  const out: WireExtra = {};
  for (const [key, value] of Object.entries(object)) if (!standard.has(key) && !isEmpty(value)) out[key] = value;
  return out;
}

/** Nothing worth keeping: OpenAI sends `"annotations": []` and `"audio": null` on every message. */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.keys(value).length === 0;
}

/**
 * Adds one streamed delta's extras to what came before: text is streamed in
 * pieces (`reasoning_content`), so strings join and lists add up — except a
 * list item with the `index` and `type` of one before it, which is the next
 * piece of that item (OpenRouter's `reasoning_details`), its `text` and
 * `summary` joined; anything else (Gemini's `extra_content` object) arrives
 * whole, and the latest wins.
 */
export function mergeExtras(into: WireExtra, delta: WireExtra): void {
  for (const [key, value] of Object.entries(delta)) {
    const before = into[key];
    if (typeof before === "string" && typeof value === "string") into[key] = before + value;
    else if (Array.isArray(before) && Array.isArray(value)) into[key] = value.reduce<unknown[]>(addPiece, [...before]);
    else into[key] = value;
  }
}

const PIECE_TEXT = ["text", "summary"];

function addPiece(items: unknown[], piece: unknown): unknown[] {
  const isItem = (item: unknown): item is Record<string, unknown> => typeof item === "object" && item !== null && typeof (item as { index?: unknown }).index === "number";
  if (!isItem(piece)) return [...items, piece];
  const at = items.findIndex((item) => isItem(item) && item.index === piece.index && item.type === piece.type);
  if (at < 0) return [...items, piece];
  const joined: Record<string, unknown> = { ...(items[at] as Record<string, unknown>), ...piece };
  for (const field of PIECE_TEXT) {
    const [a, b] = [(items[at] as Record<string, unknown>)[field], piece[field]];
    if (typeof a === "string" && typeof b === "string") joined[field] = a + b;
  }
  return items.map((item, i) => (i === at ? joined : item));
}

/** The extras as the history keeps them: absent when there are none. */
export function extraField(extra: WireExtra): { extra?: WireExtra } {
  return Object.keys(extra).length > 0 ? { extra } : {};
}
