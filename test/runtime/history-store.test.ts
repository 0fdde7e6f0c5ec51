import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { HistoryStore } from "../../src/runtime/history-store.ts";
import { tempDir } from "../support/temp-dir.ts";

const at = new Date("2026-03-01T12:00:00.000Z");

describe("HistoryStore", () => {
  test("what one process appends, the next reads back", () => {
    const stateDir = tempDir();
    const first = HistoryStore.open(stateDir, "lead");
    first.beginTurn("k1", [], at);
    first.appendMessages([{ role: "user", content: "  hi\n" }], at);
    first.appendMessages(
      [
        { role: "assistant", content: null, toolCalls: [{ id: "c1", name: "read_file", arguments: '{"path":"a"}' }] },
        { role: "tool", toolCallId: "c1", content: "A", isError: false },
      ],
      at,
    );
    first.finishTurn("k1", at, "success", "done");
    first.close();

    const second = HistoryStore.open(stateDir, "lead");
    expect(second.messages).toEqual(first.messages);
    expect(second.messages[0]).toEqual({ role: "user", content: "  hi\n" });
    expect(second.turnStatus("k1")).toBe("finished");
    expect(second.turnStatus("k2")).toBeUndefined();
    expect(statSync(second.path).mode & 0o777).toBe(0o600);
  });

  test("a joined event follows its turn: resumed through it, finished with it, also after a reopen", () => {
    const stateDir = tempDir();
    const first = HistoryStore.open(stateDir, "lead");
    first.beginTurn("e1", [{ role: "user", content: "one" }], at);
    first.joinTurn("e2", "e1", [{ role: "user", content: "two" }], at);
    expect(() => first.joinTurn("e3", "e2", [], at)).toThrow(/e3 cannot join turn e2/);
    first.close();

    const second = HistoryStore.open(stateDir, "lead");
    expect([second.turnStatus("e2"), second.turnOf("e2"), second.turnOf("e1")]).toEqual(["started", "e1", "e1"]);
    expect(second.abandonedTurns()).toEqual(["e1"]);
    second.finishTurn("e1", at, "success", "both noted");
    second.close();

    const third = HistoryStore.open(stateDir, "lead");
    expect(third.finishedTurn("e2")).toEqual({ subtype: "success", result: "both noted" });
    expect(third.abandonedTurns()).toEqual([]);
    expect(() => third.joinTurn("e3", "e1", [], at)).toThrow(/finished/);
  });

  test("a snapshot replaces everything before it", () => {
    const stateDir = tempDir();
    const store = HistoryStore.open(stateDir, "alice");
    store.appendMessages([{ role: "user", content: "old" }], at);
    store.snapshot([{ role: "user", content: "summary" }], at);
    store.appendMessages([{ role: "assistant", content: "new" }], at);
    store.close();
    expect(HistoryStore.open(stateDir, "alice").messages).toEqual([
      { role: "user", content: "summary" },
      { role: "assistant", content: "new" },
    ]);
  });

  test("a half-written last record (crash during append) is cut off and reported", () => {
    const stateDir = tempDir();
    const store = HistoryStore.open(stateDir, "lead");
    store.appendMessages([{ role: "user", content: "kept" }], at);
    store.close();
    appendFileSync(store.path, '{"v":1,"type":"message","at":"2026-03-01T12:00:00.000Z","message":{"role":"assis');
    const reopened = HistoryStore.open(stateDir, "lead");
    expect(reopened.messages).toEqual([{ role: "user", content: "kept" }]);
    expect(reopened.repaired).toContain("half-written");
    reopened.appendMessages([{ role: "assistant", content: "after" }], at);
    reopened.close();
    expect(HistoryStore.open(stateDir, "lead").messages).toHaveLength(2);
  });

  test("a corrupt complete line is an error naming the file and line, and nothing is changed", () => {
    const stateDir = tempDir();
    const store = HistoryStore.open(stateDir, "lead");
    store.appendMessages([{ role: "user", content: "x" }], at);
    store.close();
    appendFileSync(store.path, '{"v":1,"type":"message","at":"2026-03-01T12:00:00.000Z","message":{"role":"robot"}}\n');
    const before = readFileSync(store.path, "utf8");
    const error = (() => {
      try {
        HistoryStore.open(stateDir, "lead");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CorruptStateFileError);
    expect((error as Error).message).toContain(`${join(stateDir, "agents", "lead.jsonl")}:2`);
    expect(readFileSync(store.path, "utf8")).toBe(before);
    writeFileSync(store.path, "not json\n");
    expect(() => HistoryStore.open(stateDir, "lead")).toThrow(CorruptStateFileError);
  });
});
