import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { carriedUsageIn, openFileHistory } from "../../src/runtime/file-history.ts";
import { sizeOf } from "../../src/runtime/history-size.ts";
import { HistoryStore } from "../../src/runtime/history-store.ts";
import { REDACTED } from "../../src/security/redact.ts";
import { UsageLedger } from "../../src/usage/usage-ledger.ts";
import { backendRows } from "../support/store-backends.ts";
import { tempDir } from "../support/temp-dir.ts";

const at = new Date("2026-03-01T12:00:00.000Z");

describe.each(backendRows())("HistoryStore (%s store)", (_name, backend) => {

  test("what one process appends, the next reads back", async () => {
    const session = await backend.session();
    const first = await HistoryStore.open(session.open().histories, "lead");
    await first.beginTurn("k1", [], at);
    await first.appendMessages([{ role: "user", content: "  hi\n\u0000 ünïcode" }], at);
    await first.appendMessages(
      [
        { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "read_file", arguments: '{"path":"a"}' }] },
        { role: "tool", toolCallId: "c1", content: "A", isError: false },
      ],
      at,
    );
    await first.beginTurn("k2", [{ role: "user", content: "second" }], at);
    await first.finishTurn("k1", at, "success", "done");
    await first.interruptTurn("k2", at);
    first.close();

    const second = await HistoryStore.open(session.open().histories, "lead");
    expect(second.messages).toEqual(first.messages);
    expect(second.messages[0]).toEqual({ role: "user", content: "  hi\n\u0000 ünïcode" });
    expect(second.turnStatus("k1")).toBe("finished");
    expect(second.finishedTurn("k1")).toEqual({ subtype: "success", result: "done" });
    expect(second.turnStatus("k2")).toBe("interrupted");
    expect(second.turnStatus("k3")).toBeUndefined();
    // Histories are per agent.
    expect((await HistoryStore.open(session.open().histories, "alice")).messages).toEqual([]);
  });

  test("a joined event follows its turn: resumed through it, finished with it, also after a reopen", async () => {
    const session = await backend.session();
    const first = await HistoryStore.open(session.open().histories, "lead");
    await first.beginTurn("e1", [{ role: "user", content: "one" }], at);
    await first.joinTurn("e2", "e1", [{ role: "user", content: "two" }], at);
    await expect(first.joinTurn("e3", "e2", [], at)).rejects.toThrow(/e3 cannot join turn e2/);
    first.close();

    const second = await HistoryStore.open(session.open().histories, "lead");
    expect([second.turnStatus("e2"), second.turnOf("e2"), second.turnOf("e1")]).toEqual(["started", "e1", "e1"]);
    expect(second.abandonedTurns()).toEqual(["e1"]);
    await second.finishTurn("e1", at, "success", "both noted");
    second.close();

    const third = await HistoryStore.open(session.open().histories, "lead");
    expect(third.finishedTurn("e2")).toEqual({ subtype: "success", result: "both noted" });
    expect(third.abandonedTurns()).toEqual([]);
    await expect(third.joinTurn("e3", "e1", [], at)).rejects.toThrow(/finished/);
  });

  test("a snapshot replaces everything before it; a started turn with nothing after it is abandoned", async () => {
    const session = await backend.session();
    const store = await HistoryStore.open(session.open().histories, "alice");
    await store.appendMessages([{ role: "user", content: "old" }], at);
    await store.snapshot([{ role: "user", content: "summary" }], at);
    await store.appendMessages([{ role: "assistant", content: "new" }], at);
    await store.beginTurn("k9", [{ role: "user", content: "then died" }], at);
    store.close();
    const reopened = await HistoryStore.open(session.open().histories, "alice");
    expect(reopened.messages).toEqual([
      { role: "user", content: "summary" },
      { role: "assistant", content: "new" },
      { role: "user", content: "then died" },
    ]);
    expect(reopened.abandonedTurns()).toEqual(["k9"]);
  });

  test("its size is what compaction would count over its messages, as they grow, after a snapshot and after a reopen", async () => {
    const session = await backend.session();
    const store = await HistoryStore.open(session.open().histories, "alice");
    const sizes = () => [store.size, sizeOf(store.messages)];
    expect(sizes()).toEqual([0, 0]);
    await store.beginTurn("k1", [{ role: "user", content: "read a and b" }], at);
    await store.appendMessages(
      [
        {
          role: "assistant",
          content: "reading",
          toolCalls: [
            { id: "c1", name: "read_file", arguments: '{"path":"a"}' },
            { id: "c2", name: "read_file", arguments: '{"path":"b"}', extra: { extra_content: { google: { thought_signature: "sig" } } } },
          ],
          extra: { reasoning_content: "first a, then b" },
        },
        { role: "tool", toolCallId: "c1", content: "A".repeat(500), isError: false },
        { role: "tool", toolCallId: "c2", content: "", isError: true },
      ],
      at,
    );
    expect(store.size).toBeGreaterThan(500);
    expect(store.size).toBe(sizeOf(store.messages));
    await store.snapshot([{ role: "user", content: "summary of it" }], at);
    expect(sizes()).toEqual([13, 13]);
    await store.appendMessages([{ role: "assistant", content: null }], at);
    store.close();
    const reopened = await HistoryStore.open(session.open().histories, "alice");
    expect(reopened.size).toBe(13);
    expect(reopened.size).toBe(sizeOf(reopened.messages));
  });

  test("appends issued together are stored in the order they were issued", async () => {
    const session = await backend.session();
    const store = await HistoryStore.open(session.open().histories, "lead");
    await Promise.all(Array.from({ length: 20 }, (_, n) => store.appendMessages([{ role: "user", content: `m${n}` }], at)));
    const reopened = await HistoryStore.open(session.open().histories, "lead");
    expect(reopened.messages.map((m) => m.content)).toEqual(Array.from({ length: 20 }, (_, n) => `m${n}`));
    expect(store.messages).toEqual(reopened.messages);
  });

  test("secrets are masked the same in memory and in the store", async () => {
    const session = await backend.session();
    const store = await HistoryStore.open(session.open().histories, "lead");
    const secret = "abcdefghijklmnopqrstuvwxyz0123456789";
    await store.appendMessages([{ role: "user", content: `curl -H "Authorization: Bearer ${secret}"` }], at);
    expect(store.messages[0]!.content).toBe(`curl -H "Authorization: ${REDACTED}"`);
    const reopened = await HistoryStore.open(session.open().histories, "lead");
    expect(reopened.messages).toEqual(store.messages);
  });

  test("archiving frees the name: the next history of it starts empty; the old one is kept", async () => {
    const session = await backend.session();
    const histories = session.open().histories;
    expect(await histories.archive("bob", at)).toBeUndefined();
    expect(await histories.wasArchived("bob")).toBe(false);
    const bob = await HistoryStore.open(histories, "bob");
    await bob.appendMessages([{ role: "user", content: "first life" }], at);
    bob.close();
    const where = await histories.archive("bob", at);
    expect(where).toContain("bob");
    expect(await session.open().histories.wasArchived("bob")).toBe(true);
    expect(await histories.wasArchived("bo")).toBe(false);
    expect((await HistoryStore.open(session.open().histories, "bob")).messages).toEqual([]);
    // A second archive in the same instant is kept apart from the first.
    const again = await HistoryStore.open(histories, "bob");
    await again.appendMessages([{ role: "user", content: "second life" }], at);
    again.close();
    const second = await histories.archive("bob", at);
    expect(second).toBeDefined();
    expect(second).not.toBe(where);
  });

  test("readers list the live histories (not the archived) and read them back as appended", async () => {
    const session = await backend.session();
    const histories = session.open().histories;
    expect(await histories.agents()).toEqual([]);
    expect(await histories.read("lead")).toEqual([]);
    for (const name of ["lead", "bob", "alice"] as const) {
      const store = await HistoryStore.open(histories, name);
      await store.appendMessages([{ role: "user", content: `to ${name}` }], at);
      store.close();
    }
    await histories.archive("bob", at);
    const reader = session.open().histories;
    expect(await reader.agents()).toEqual(["alice", "lead"]);
    expect(await reader.read("alice")).toEqual([{ v: 1, type: "message", at: at.toISOString(), message: { role: "user", content: "to alice" } }]);
  });

  test("usage records ride on the agent's next append, come back when it fails, and are found in live and archived histories", async () => {
    const session = await backend.session();
    const histories = session.open().histories;
    const ledger = UsageLedger.open(tempDir("ledger-"));
    const call = (agent: string, identity: string, inputTokens: number) =>
      ledger.recordModelCall({ agent, identity, model: "m", usage: { inputTokens, outputTokens: 1 }, toolCalls: 0, durationMs: 5 });
    const alice = await HistoryStore.open(histories, "alice");
    alice.carryUsage(ledger.carrierOf("alice"));
    call("alice", "alice", 10);
    call("alice", "alice/task-1", 20);
    call("bob", "bob", 30);
    if (session.place.includes("#")) {
      // Another owner appended first: this append conflicts and stores nothing.
      await (await HistoryStore.open(session.open().histories, "alice")).appendMessages([{ role: "user", content: "the other owner" }], at);
    } else {
      // The file cannot be opened: this append stores nothing.
      mkdirSync(join(session.place, "agents", "alice.jsonl"));
    }
    await expect(alice.appendMessages([{ role: "user", content: "lost" }], at)).rejects.toThrow();
    if (session.place.includes("#")) alice.close();
    else rmSync(join(session.place, "agents", "alice.jsonl"), { recursive: true });
    expect(await histories.carriedUsage()).toEqual([]);
    const again = await HistoryStore.open(histories, "alice");
    again.carryUsage(ledger.carrierOf("alice"));
    call("alice", "alice", 40);
    await again.appendMessages([{ role: "user", content: "stored" }], at);
    // Nothing left to ride on the next one.
    await again.appendMessages([{ role: "user", content: "stored too" }], at);
    again.close();
    await histories.archive("alice", at);
    const bob = await HistoryStore.open(histories, "bob");
    bob.carryUsage(ledger.carrierOf("bob"));
    await bob.appendMessages([{ role: "user", content: "bob's" }], at);
    const carried = await session.open().histories.carriedUsage();
    // Each history's in the order made (the histories in no set order).
    expect(carried.map((record) => (record.type === "model_call" ? [record.agent, record.identity, record.input_tokens] : [])).sort()).toEqual([
      ["alice", "alice", 10],
      ["alice", "alice", 40],
      ["alice", "alice/task-1", 20],
      ["bob", "bob", 30],
    ]);
    expect(carried.filter((record) => record.agent === "alice").map((record) => (record.type === "model_call" ? record.input_tokens : 0))).toEqual([10, 20, 40]);
    expect(new Set(carried.map((record) => record.id)).size).toBe(4);
    // The history's own readers see only its messages.
    expect((await HistoryStore.open(session.open().histories, "bob")).messages).toEqual([{ role: "user", content: "bob's" }]);
    await ledger.close();
  });
});

describe("HistoryStore files", () => {
  test("agents/<name>.jsonl, 0600", async () => {
    const stateDir = tempDir();
    const store = openFileHistory(stateDir, "lead");
    await store.appendMessages([{ role: "user", content: "x" }], at);
    expect(store.path).toBe(join(stateDir, "agents", "lead.jsonl"));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  test("a half-written last record (crash during append) is cut off and reported", async () => {
    const stateDir = tempDir();
    const store = openFileHistory(stateDir, "lead");
    await store.appendMessages([{ role: "user", content: "kept" }], at);
    store.close();
    appendFileSync(store.path, '{"v":1,"type":"message","at":"2026-03-01T12:00:00.000Z","message":{"role":"assis');
    const reopened = openFileHistory(stateDir, "lead");
    expect(reopened.messages).toEqual([{ role: "user", content: "kept" }]);
    expect(reopened.repaired).toContain("half-written");
    await reopened.appendMessages([{ role: "assistant", content: "after" }], at);
    reopened.close();
    expect(openFileHistory(stateDir, "lead").messages).toHaveLength(2);
  });

  test("a corrupt complete line is an error naming the file and line, and nothing is changed", async () => {
    const stateDir = tempDir();
    const store = openFileHistory(stateDir, "lead");
    await store.appendMessages([{ role: "user", content: "x" }], at);
    store.close();
    appendFileSync(store.path, '{"v":1,"type":"message","at":"2026-03-01T12:00:00.000Z","message":{"role":"robot"}}\n');
    const before = readFileSync(store.path, "utf8");
    const error = (() => {
      try {
        openFileHistory(stateDir, "lead");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CorruptStateFileError);
    expect((error as Error).message).toContain(`${join(stateDir, "agents", "lead.jsonl")}:2`);
    expect(readFileSync(store.path, "utf8")).toBe(before);
    writeFileSync(store.path, "not json\n");
    expect(() => openFileHistory(stateDir, "lead")).toThrow(CorruptStateFileError);
  });

  test("the usage a history file carries: wherever its lines are, a half-written last one left out, a corrupt one named by line", () => {
    const stateDir = tempDir();
    mkdirSync(join(stateDir, "agents"));
    const path = join(stateDir, "agents", "lead.jsonl");
    const usage = (id: string) =>
      JSON.stringify({ v: 1, type: "usage", at: at.toISOString(), record: { v: 1, type: "turn", id, at: at.toISOString(), agent: "lead", key: "k", subtype: "success", duration_ms: 3 } });
    const message = JSON.stringify({ v: 1, type: "message", at: at.toISOString(), message: { role: "user", content: usage("inside") } });
    writeFileSync(path, `${usage("first")}\n${message}\n${usage("second")}\n${usage("half").slice(0, 40)}`);
    expect(carriedUsageIn(stateDir).map((record) => record.id)).toEqual(["first", "second"]);
    writeFileSync(path, `${message}\n${usage("first").replace('"agent"', '"agnt"')}\n`);
    expect(() => carriedUsageIn(stateDir)).toThrow(`${path}:2`);
  });
});
