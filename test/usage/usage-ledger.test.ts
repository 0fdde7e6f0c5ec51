import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { UsageLedger, ledgerIds, readSessionRecords, readUsageRecords } from "../../src/usage/usage-ledger.ts";
import { UsageRecord } from "../../src/usage/usage-record.ts";
import { generatedHistoryLines } from "../support/generated-history.ts";
import { seeded } from "../support/schema-agreement.ts";
import { tempDir } from "../support/temp-dir.ts";

// usage.jsonl as derived data: the histories' copies fill in what it lacks, by id, once.

const call = (id: string, inputTokens: number): UsageRecord => ({
  v: 1,
  type: "model_call",
  id,
  at: "2026-03-01T12:00:00.000Z",
  agent: "lead",
  identity: "lead",
  model: "m",
  input_tokens: inputTokens,
  output_tokens: 0,
  tool_calls: 0,
  duration_ms: 1,
});
const PRICING = { m: { input_per_mtok: 1, output_per_mtok: 1 } };

describe("UsageLedger, derived from the histories", () => {
  test("opening appends the carried records the file lacks, once, and counts them; a reader sees the same without writing", async () => {
    const stateDir = tempDir("usage-ledger-");
    const first = UsageLedger.open(stateDir);
    first.recordModelCall({ agent: "lead", identity: "lead", model: "m", usage: { inputTokens: 100, outputTokens: 0 }, toolCalls: 0, durationMs: 1 });
    await first.close();
    const [written] = readSessionRecords(stateDir, []);
    const carried = [written!, call("lost-1", 1000), call("lost-2", 2000), call("lost-1", 1000)];
    expect(readSessionRecords(stateDir, carried).map((record) => record.id)).toEqual([written!.id, "lost-1", "lost-2"]);
    expect(readFileSync(join(stateDir, "usage.jsonl"), "utf8").split("\n").filter(Boolean)).toHaveLength(1);

    const second = UsageLedger.open(stateDir, { carried });
    expect(second.spentUsd(PRICING)).toBeCloseTo(0.0031, 9);
    expect(second.run(PRICING).total.modelCalls).toBe(0);
    await second.close();
    const third = UsageLedger.open(stateDir, { carried });
    expect(third.session(PRICING).total).toMatchObject({ inputTokens: 3100, modelCalls: 3 });
    await third.close();
    expect(readFileSync(join(stateDir, "usage.jsonl"), "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });

  test("a record two runtimes both re-derived counts once", () => {
    const stateDir = tempDir("usage-ledger-");
    const line = `${JSON.stringify(call("twice", 500))}\n`;
    appendFileSync(join(stateDir, "usage.jsonl"), line + line);
    const ledger = UsageLedger.open(stateDir);
    expect(ledger.session(PRICING).total).toMatchObject({ inputTokens: 500, modelCalls: 1 });
  });
});

describe("readUsageRecords", () => {
  // usage.jsonl is read at every start: the plain check for what the ledger
  // writes, the schema for the rest, whose verdict and message stand.
  test("reads generated records as the schema returns them, a record in another key order through the schema, and refuses a bad one naming its line", () => {
    const next = seeded(47);
    const lines = generatedHistoryLines(next, 2_000)
      .map((line) => JSON.parse(line) as { type: string; record?: Record<string, unknown> })
      .flatMap((record) => (record.type === "usage" ? [record.record!] : []))
      .map((record) => JSON.stringify(next() < 0.1 ? Object.fromEntries(Object.entries(record).reverse()) : record));
    const dir = tempDir();
    const path = join(dir, "usage.jsonl");
    writeFileSync(path, lines.map((line) => `${line}\n`).join(""));
    const expected = lines.map((line) => UsageRecord.parse(JSON.parse(line)));
    const read = readUsageRecords(path, { repair: false });
    expect(JSON.stringify(read)).toBe(JSON.stringify(expected));
    expect(lines.filter((line) => !line.startsWith('{"v":1,')).length).toBeGreaterThan(20);
    expect(expected.length).toBeGreaterThan(200);

    const bad = '{"v":1,"type":"turn","at":"2026-03-01T12:00:00.000Z","agent":"lead","key":"k","subtype":"success","duration_ms":-1}';
    appendFileSync(path, `${bad}\n`);
    const refused = (() => {
      try {
        readUsageRecords(path, { repair: false });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(CorruptStateFileError);
    expect((refused as CorruptStateFileError).path).toBe(`${path}:${lines.length + 1}`);
    expect((refused as Error).message).toContain(UsageRecord.safeParse(JSON.parse(bad)).error!.issues[0]!.message);
  });
});

describe("ledgerIds", () => {
  test("the ids of usage.jsonl's whole lines, read from their text: not a half-written last line's, not an escaped one, none for a record without", () => {
    const dir = tempDir();
    const at = "2026-03-01T12:00:00.000Z";
    const lines = [
      { v: 1, type: "model_call", id: "call-1", at, agent: "lead", identity: "lead", model: "m", input_tokens: 1, output_tokens: 1, tool_calls: 0, duration_ms: 1 },
      { v: 1, type: "turn", id: "turn-1", at, agent: "lead", key: "k", subtype: "success", duration_ms: 1 },
      { v: 1, type: "turn", at, agent: "lead", key: "k", subtype: "success", duration_ms: 1 },
      { v: 1, type: "turn", id: 'quo"ted', at, agent: "lead", key: "k", subtype: "success", duration_ms: 1 },
      { type: "turn", v: 1, id: "reordered", at, agent: "lead", key: "k", subtype: "success", duration_ms: 1 },
    ].map((record) => `${JSON.stringify(record)}\n`);
    writeFileSync(join(dir, "usage.jsonl"), `${lines.join("")}{"v":1,"type":"turn","id":"half-written","at":"2026`);
    expect([...ledgerIds(dir)]).toEqual(["call-1", "turn-1"]);
    expect([...ledgerIds(tempDir())]).toEqual([]);
  });
});
