import { describe, expect, test } from "bun:test";
import type { z } from "zod";
import { plainChatMessage, plainHistoryRecord } from "../../src/runtime/history-record-check.ts";
import { asStored, HistoryRecord } from "../../src/runtime/history-store.ts";
import { ChatMessage } from "../../src/model/types.ts";
import { clearSecrets, registerSecret } from "../../src/security/redact.ts";
import { plainUsageRecord } from "../../src/usage/usage-record-check.ts";
import { UsageRecord } from "../../src/usage/usage-record.ts";
import { casesOver } from "../support/schema-agreement.ts";

// Every append checks its records with plainHistoryRecord before the schema: it
// takes the common shapes as they are and leaves the rest to HistoryRecord.parse.
// It must never take what the schema refuses, must return what the schema would,
// and must take the records a step writes (or it saves nothing).

const at = "2026-03-01T12:00:00.000Z";
const modelCall = { v: 1, type: "model_call", id: "u-1", at, agent: "lead", identity: "alice", model: "gpt-5", input_tokens: 1200, output_tokens: 30, cached_input_tokens: 1024, tool_calls: 1, duration_ms: 812 };
const usageTurn = { v: 1, type: "turn", at, agent: "alice", key: "0190b8a6-7c1e-7d3a-9f00-000000000001", subtype: "success", duration_ms: 2000 };
const toolCall = { id: "call_1_0", name: "read_file", arguments: '{"path":"a.txt"}', extra: { google: { thought_signature: "sig" } } };
const messages: Record<string, unknown>[] = [
  { role: "system", content: "You are the Lead." },
  { role: "user", content: "hello" },
  { role: "assistant", content: null, toolCalls: [toolCall, { id: "call_1_1", name: "glob", arguments: "{" }] },
  { role: "assistant", content: "done", extra: { reasoning_content: "because" } },
  { role: "tool", toolCallId: "call_1_0", content: "1\talpha\n", isError: false },
  { role: "tool", toolCallId: "call_1_1", content: "" },
];
const records: Record<string, unknown>[] = [
  ...messages.map((message) => ({ v: 1, type: "message", at, message })),
  { v: 1, type: "turn", at, key: "k1", status: "started" },
  { v: 1, type: "turn", at, key: "k1", status: "finished", subtype: "success", result: "the answer" },
  { v: 1, type: "turn", at, key: "k2", status: "started", joins: "k1" },
  { v: 1, type: "turn", at, key: "k2", status: "interrupted", subtype: "error_interrupted" },
  { v: 1, type: "usage", at, record: modelCall },
  { v: 1, type: "usage", at, record: usageTurn },
  { v: 1, type: "snapshot", at, messages },
  { v: 1, type: "snapshot", at, messages: [] },
];
const extraValues = ["message", "turn", "usage", "snapshot", "system", "user", "assistant", "tool", "started", "finished", "success", "error_model", "model_call", 1, 2, false, at];

/** Any key, at any depth, set to undefined: the schema takes it (an optional key), the plain check leaves it to the schema. */
function holdsUndefined(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsUndefined);
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some((item) => item === undefined || holdsUndefined(item));
}

/**
 * Runs `plain` and `schema` over `cases`: whatever `plain` takes, the schema
 * takes and returns equal (same keys, same order); whatever `plain` leaves to the
 * schema and the schema takes, the schema returns changed (its keys in another
 * order: the plain check returns its input as it is) or is one of `leftOk`.
 * Returns the counts.
 */
function expectSound(schema: z.ZodType, plain: (value: unknown) => unknown, cases: Iterable<[unknown, string]>, leftOk: (value: unknown) => boolean) {
  const counts = { plain: 0, schema: 0, refused: 0 };
  for (const [value, label] of cases) {
    const mine = plain(value);
    const zod = schema.safeParse(value);
    if (mine !== undefined) {
      if (!zod.success) throw new Error(`${label}: the plain check takes what the schema refuses (${zod.error.issues[0]?.message}): ${JSON.stringify(value)}`);
      expect(mine as object).toEqual(zod.data as object);
      expect(Object.keys(mine as object)).toEqual(Object.keys(zod.data as object));
      counts.plain += 1;
    } else if (zod.success) {
      if (JSON.stringify(zod.data) === JSON.stringify(value) && !leftOk(value)) throw new Error(`${label}: the schema takes it but the plain check does not: ${JSON.stringify(value)}`);
      counts.schema += 1;
    } else counts.refused += 1;
  }
  return counts;
}

function* wrapped(cases: Iterable<[unknown, string]>, wrap: (value: unknown) => unknown, where: string): Generator<[unknown, string]> {
  for (const [value, label] of cases) yield [wrap(value), `${where}: ${label}`];
}

describe("plainHistoryRecord", () => {
  test("takes every record a step or a compaction writes, as the schema returns it", () => {
    for (const record of records) {
      expect(plainHistoryRecord(record)).toBe(record as never);
      expect(plainHistoryRecord(record)).toEqual(HistoryRecord.parse(record));
    }
    // A snapshot's message list with a hole: the schema refuses it, so must the check.
    const holed = { v: 1, type: "snapshot", at, messages: [messages[0], , messages[1]] };
    expect(HistoryRecord.safeParse(holed).success).toBe(false);
    expect(plainHistoryRecord(holed)).toBeUndefined();
  });

  test("never takes what the schema refuses: every field of a record, a message, a tool call and a usage record replaced, removed or added, and fuzzed", () => {
    const leftOk = holdsUndefined;
    const top = expectSound(HistoryRecord, plainHistoryRecord, casesOver(records, { extraValues, fuzzRounds: 3_000 }), leftOk);
    const inMessage = expectSound(
      HistoryRecord,
      plainHistoryRecord,
      wrapped(casesOver(messages, { extraValues, fuzzRounds: 3_000, seed: 7 }), (message) => ({ v: 1, type: "message", at, message }), "message"),
      leftOk,
    );
    const inCall = expectSound(
      HistoryRecord,
      plainHistoryRecord,
      wrapped(casesOver([toolCall, { id: "c", name: "n", arguments: "" }], { extraValues, fuzzRounds: 1_000, seed: 9 }), (call) => ({ v: 1, type: "message", at, message: { role: "assistant", content: null, toolCalls: [call] } }), "tool call"),
      leftOk,
    );
    const inUsage = expectSound(
      HistoryRecord,
      plainHistoryRecord,
      wrapped(casesOver([modelCall, usageTurn], { extraValues, fuzzRounds: 2_000, seed: 11 }), (record) => ({ v: 1, type: "usage", at, record }), "usage"),
      leftOk,
    );
    const inSnapshot = expectSound(
      HistoryRecord,
      plainHistoryRecord,
      wrapped(casesOver(messages, { extraValues, fuzzRounds: 2_000, seed: 13 }), (message) => ({ v: 1, type: "snapshot", at, messages: [messages[1], message] }), "snapshot"),
      leftOk,
    );
    // Every verdict was exercised, many times, at each level.
    for (const counts of [top, inMessage, inCall, inUsage, inSnapshot]) {
      expect(counts.plain).toBeGreaterThan(20);
      expect(counts.refused).toBeGreaterThan(300);
    }
  });
});

describe("plainUsageRecord", () => {
  test("takes the records every model call and turn writes, and never what the schema refuses", () => {
    expect(plainUsageRecord(modelCall)).toBe(modelCall as never);
    expect(plainUsageRecord(usageTurn)).toBe(usageTurn as never);
    const { id: _id, cached_input_tokens: _cached, ...bare } = modelCall;
    expect(plainUsageRecord(bare)).toBe(bare as never);
    const counts = expectSound(UsageRecord, plainUsageRecord, casesOver([modelCall, usageTurn, bare], { extraValues, fuzzRounds: 3_000, seed: 3 }), holdsUndefined);
    expect(counts.plain).toBeGreaterThan(20);
    expect(counts.refused).toBeGreaterThan(300);
  });
});

describe("plainChatMessage", () => {
  test("takes every message a history holds, as the schema returns it, and never what the schema refuses", () => {
    for (const message of messages) expect(plainChatMessage(message)).toBe(message as never);
    const counts = expectSound(ChatMessage, plainChatMessage, casesOver(messages, { extraValues, fuzzRounds: 3_000, seed: 5 }), holdsUndefined);
    expect(counts.plain).toBeGreaterThan(20);
    expect(counts.refused).toBeGreaterThan(300);
  });

  test("asStored masks, then checks: a prompt comes back as the schema would return it, a secret in it masked", () => {
    registerSecret("sk-prompt-secret-0123456789abcdef");
    try {
      expect(asStored({ role: "user", content: "hello" })).toEqual(ChatMessage.parse({ role: "user", content: "hello" }));
      expect(asStored({ role: "user", content: "use sk-prompt-secret-0123456789abcdef" })).toEqual({ role: "user", content: "use [REDACTED]" });
      // Not a message the schema takes: its error, as before.
      expect(() => asStored({ role: "user", content: 7 } as never)).toThrow();
    } finally {
      clearSecrets();
    }
  });
});
