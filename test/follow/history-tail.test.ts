import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileHistoryTail } from "../../src/follow/history-tail.ts";
import { MailboxWatch, fileMailboxPeek } from "../../src/follow/mailbox-watch.ts";
import { followAgent, type FollowItem } from "../../src/follow/session-follower.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { FileHistoryBackend, openFileHistory } from "../../src/runtime/file-history.ts";
import { assertAgentName } from "../../src/core/agent-name.ts";
import { message } from "../e2e/fixture.ts";
import { tempDir } from "../support/temp-dir.ts";

const at = new Date("2026-12-01T12:00:00.000Z");
const line = (content: string) => `${JSON.stringify({ v: 1, type: "message", at: at.toISOString(), message: { role: "assistant", content } })}\n`;
const texts = (records: { type: string; message?: { content?: unknown } }[]) => records.map((r) => r.message?.content);

describe("FileHistoryTail", () => {
  test("takes whole lines only: a record being appended waits for its newline", async () => {
    const path = join(tempDir(), "alice.jsonl");
    const tail = new FileHistoryTail(path);
    expect(await tail.read()).toEqual({ records: [], replaced: false, missing: true });
    const second = line("two");
    writeFileSync(path, line("one") + second.slice(0, 10));
    expect(texts((await tail.read()).records)).toEqual(["one"]);
    expect((await tail.read()).records).toEqual([]);
    appendFileSync(path, second.slice(10));
    expect(texts((await tail.read()).records)).toEqual(["two"]);
  });

  test("a history moved aside is missing; a new one of the same name is read from its start, flagged as replaced", async () => {
    const dir = tempDir();
    const path = join(dir, "alice.jsonl");
    writeFileSync(path, line("old one") + line("old two"));
    const tail = new FileHistoryTail(path);
    expect((await tail.read()).records).toHaveLength(2);
    renameSync(path, join(dir, "removed.jsonl"));
    expect(await tail.read()).toEqual({ records: [], replaced: false, missing: true });
    writeFileSync(path, line("new one"));
    const read = await tail.read();
    expect(read.replaced).toBe(true);
    expect(texts(read.records)).toEqual(["new one"]);
  });

  test("a file cut shorter than what was read is read again from its start", async () => {
    const path = join(tempDir(), "alice.jsonl");
    writeFileSync(path, line("one") + line("two"));
    const tail = new FileHistoryTail(path);
    await tail.read();
    truncateSync(path, 0);
    appendFileSync(path, line("three"));
    const read = await tail.read();
    expect(read.replaced).toBe(true);
    expect(texts(read.records)).toEqual(["three"]);
  });

  test("a compaction's snapshot comes through as the record it is", async () => {
    const dir = tempDir();
    const history = openFileHistory(dir, assertAgentName("alice"));
    const tail = new FileHistoryTail(new FileHistoryBackend(dir).pathOf("alice"));
    await history.appendMessages([{ role: "user", content: "hi" }], at);
    expect((await tail.read()).records.map((r) => r.type)).toEqual(["message"]);
    await history.snapshot([{ role: "user", content: "summary" }], at);
    expect((await tail.read()).records.map((r) => r.type)).toEqual(["snapshot"]);
    history.close();
  });
});

describe("followAgent", () => {
  test("reads until the runtime is gone, then once more, and stops: what was appended before it went is printed", async () => {
    const dir = tempDir();
    const path = new FileHistoryBackend(dir).pathOf("alice");
    mkdirSync(join(dir, "agents"));
    const store = new FileMailboxStore({ stateDir: dir });
    await store.send(message("alice", "first task"));
    let running = true;
    let looks = 0;
    const items: FollowItem[] = [];
    const end = await followAgent(
      {
        history: new FileHistoryTail(path),
        mailbox: new MailboxWatch(fileMailboxPeek(dir, assertAgentName("alice"), 1 << 20)),
        running: async () => {
          looks += 1;
          // The runtime writes one more record, then goes, between two looks.
          if (looks === 3) {
            appendFileSync(path, line("last words"));
            running = false;
          }
          return running;
        },
      },
      async (item) => void items.push(item),
      { everyMs: 5, signal: new AbortController().signal },
    );
    expect(end).toBe("ended");
    expect(looks).toBe(3);
    expect(items.map((item) => (item.type === "record" ? item.record.type : item.type === "mail" ? `${item.change.change} ${item.change.entry.kind}` : item.type))).toEqual([
      "arrived task",
      "message",
    ]);
  });

  test("an abort stops it between looks", async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const end = await followAgent({ history: new FileHistoryTail(join(tempDir(), "x.jsonl")), running: async () => true }, async () => {}, {
      everyMs: 10_000,
      signal: stop.signal,
    });
    expect(end).toBe("stopped");
  });
});
