import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import { formatTimeline, sessionTimeline } from "../../src/timeline/session-timeline.ts";
import { UsageLedger } from "../../src/usage/usage-ledger.ts";
import { tempDir } from "../support/temp-dir.ts";

// The timeline is read from real history and usage files, written by the same
// classes the runtime uses, with a clock that moves only when told.

async function writeSession(stateDir: string) {
  const clock = new ManualClock("2026-11-30T10:00:00.000Z");
  const lead = openFileHistory(stateDir, "lead");
  const alice = openFileHistory(stateDir, "alice");
  const usage = UsageLedger.open(stateDir, { clock });
  const tick = () => {
    clock.advance(10);
    return clock.now();
  };
  await lead.beginTurn("k1", [{ role: "user", content: "Have alice write a.txt" }], tick());
  usage.recordModelCall({ agent: "lead", identity: "lead", model: "m", usage: { inputTokens: 100, outputTokens: 7 }, toolCalls: 1, durationMs: 40 });
  await lead.appendMessages([{ role: "assistant", content: null, toolCalls: [{ id: "c1", name: "spawn_teammate", arguments: '{"name":"alice"}' }] }], tick());
  await alice.beginTurn("m1", [{ role: "user", content: "write a.txt" }], tick());
  await lead.appendMessages([{ role: "tool", toolCallId: "c1", content: "spawned alice" }], tick());
  await alice.appendMessages([{ role: "assistant", content: "Writing it." }], tick());
  await alice.appendMessages([{ role: "tool", toolCallId: "c9", content: "denied", isError: true }], tick());
  await alice.finishTurn("m1", tick(), "success", "wrote a.txt");
  const envelope = JSON.stringify({ agent_event: { id: "e1", source: "mailbox", from: "alice", kind: "result", sent_at: "2026-11-30T10:00:01.000Z" }, content: "wrote a.txt" });
  await lead.beginTurn("e1", [{ role: "user", content: envelope }], tick());
  await lead.finishTurn("e1", tick(), "success", "done");
  for (const store of [lead, alice]) store.close();
  usage.close();
}

describe("sessionTimeline", () => {
  test("every agent's turns, messages, tool calls and model calls, in time order", async () => {
    const stateDir = tempDir();
    await writeSession(stateDir);
    const entries = await sessionTimeline(stateDir);
    expect(entries.map((entry) => [entry.agent, entry.kind, entry.text])).toEqual([
      ["lead", "turn", "turn started"],
      ["lead", "user", "Have alice write a.txt"],
      ["lead", "model_call", "model call: 100 in, 7 out, 1 tool call(s), 40 ms"],
      ["lead", "tool_call", 'spawn_teammate {"name":"alice"}'],
      ["alice", "turn", "turn started"],
      ["alice", "user", "write a.txt"],
      ["lead", "tool_result", "spawned alice"],
      ["alice", "assistant", "Writing it."],
      ["alice", "tool_result", "error: denied"],
      ["alice", "turn", "turn finished (success): wrote a.txt"],
      ["lead", "turn", "turn started"],
      ["lead", "event", "result from alice: wrote a.txt"],
      ["lead", "turn", "turn finished (success): done"],
    ]);
    const times = entries.map((entry) => entry.at);
    expect([...times].sort()).toEqual(times);
    const lines = formatTimeline(entries).trimEnd().split("\n");
    expect(lines[0]).toBe("2026-11-30T10:00:00.010Z  lead   turn         turn started");
    expect(lines).toHaveLength(entries.length);
  });

  test("a model call at the millisecond of its answer is listed before it, and after what came before it", async () => {
    const stateDir = tempDir();
    const clock = new ManualClock("2026-11-30T10:00:00.000Z");
    const lead = openFileHistory(stateDir, "lead");
    const usage = UsageLedger.open(stateDir, { clock });
    const call = (toolCalls: number) => usage.recordModelCall({ agent: "lead", identity: "lead", model: "m", usage: { inputTokens: 5, outputTokens: toolCalls }, toolCalls, durationMs: 0 });
    // Every record at one millisecond, as a fast endpoint and a fast disk make them.
    await lead.beginTurn("k1", [{ role: "user", content: "go" }], clock.now());
    call(1);
    await lead.appendMessages([{ role: "assistant", content: null, toolCalls: [{ id: "c1", name: "glob", arguments: "{}" }] }], clock.now());
    await lead.appendMessages([{ role: "tool", toolCallId: "c1", content: "a.txt" }], clock.now());
    call(0);
    await lead.appendMessages([{ role: "assistant", content: "found a.txt" }], clock.now());
    await lead.finishTurn("k1", clock.now(), "success", "found a.txt");
    lead.close();
    usage.close();
    const entries = await sessionTimeline(stateDir);
    expect(entries.map((entry) => [entry.kind, entry.text.split(",")[0]])).toEqual([
      ["turn", "turn started"],
      ["user", "go"],
      ["model_call", "model call: 5 in"],
      ["tool_call", "glob {}"],
      ["tool_result", "a.txt"],
      ["model_call", "model call: 5 in"],
      ["assistant", "found a.txt"],
      ["turn", "turn finished (success): found a.txt"],
    ]);
    expect(entries.filter((entry) => entry.kind === "model_call").map((entry) => entry.text)).toEqual([
      "model call: 5 in, 1 out, 1 tool call(s), 0 ms",
      "model call: 5 in, 0 out, 0 tool call(s), 0 ms",
    ]);
  });

  test("reads without repairing: a half-written last line (a live runtime's) is skipped and left in place", async () => {
    const stateDir = tempDir();
    await writeSession(stateDir);
    const path = join(stateDir, "agents", "alice.jsonl");
    appendFileSync(path, '{"v":1,"type":"mess');
    const before = readFileSync(path, "utf8");
    expect((await sessionTimeline(stateDir)).filter((entry) => entry.agent === "alice")).toHaveLength(5);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  test("a state dir with no histories is an empty timeline", async () => {
    expect(await sessionTimeline(tempDir())).toEqual([]);
  });
});
