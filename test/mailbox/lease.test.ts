import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { readLockOwner } from "../../src/storage/lock-dir.ts";
import { startWorker } from "../fixtures/mailbox-worker.ts";
import { tempDir } from "../support/temp-dir.ts";

// The mailbox keeps mailboxes.lock from one call to the next while this process
// stays busy (a claim and its ack), and gives it back once it goes idle.

describe("the mailbox lock kept between calls", () => {
  test("is held by this process right after a call, and given back when the event loop turns", async () => {
    const stateDir = tempDir("agent-mailbox-lease-");
    const lockPath = join(stateDir, "mailboxes.lock");
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const store = new FileMailboxStore({ stateDir });
    await store.send(createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: uuidV7Source }));
    const claimed = await store.claim("alice");
    expect(readLockOwner(lockPath)?.pid).toBe(process.pid);
    await store.ack(claimed!);
    await Bun.sleep(20);
    expect(existsSync(lockPath)).toBe(false);
  });

  test("another process gets in as soon as this one is idle", async () => {
    const stateDir = tempDir("agent-mailbox-lease-");
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const store = new FileMailboxStore({ stateDir });
    await store.send(createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: uuidV7Source }));
    // The child's sends need the lock this process just used; awaiting it is idle time here.
    const sender = startWorker("send", stateDir, { tag: "child", to: ["alice"], count: 3 });
    expect(await sender.finished).toMatchObject({ exitCode: 0 });
    expect(sender.events.filter((e) => e.sent)).toHaveLength(3);
    const drained: string[] = [];
    for (let m = await store.claim("alice"); m; m = await store.claim("alice")) drained.push(m.content);
    expect(drained).toEqual(["x", "child-0", "child-1", "child-2"]);
  });
});
