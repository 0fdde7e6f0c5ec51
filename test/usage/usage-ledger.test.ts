import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { UsageLedger, readSessionRecords } from "../../src/usage/usage-ledger.ts";
import type { UsageRecord } from "../../src/usage/usage-record.ts";
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
