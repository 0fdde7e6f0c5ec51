import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { withFileLock } from "../../src/storage/file-lock.ts";
import { openOsLock } from "../../src/storage/os-lock.ts";
import { startWorker } from "../fixtures/mailbox-worker.ts";
import { tempDir } from "../support/temp-dir.ts";

// The mailbox's cross-process lock is flock(2) on mailboxes.lock.flock (the lock
// directory is the fallback where there is no flock): cheap enough to take and
// give back on every call, so no call keeps it for the next one.

const clock = new ManualClock("2026-03-01T12:00:00.000Z");
const message = (content: string) => createMessage({ sender: "lead", recipient: "alice", kind: "task", content }, { clock, ids: uuidV7Source });

describe("the mailbox lock", () => {
  test("is free the moment a call returns, before the event loop turns", async () => {
    const stateDir = tempDir("agent-mailbox-lock-");
    const store = new FileMailboxStore({ stateDir });
    await store.send(message("x"));
    const claimed = await store.claim("alice");
    // Another open file of the lock, as another process would have: it gets in now.
    const other = openOsLock(join(stateDir, "mailboxes.lock.flock"))!;
    expect(other.tryTake()).toBe(true);
    // And while it holds it, this process's store waits, then gives up naming the holder.
    const refused = await new FileMailboxStore({ stateDir, lock: { waitMs: 100 } }).ack(claimed!).catch((e) => e);
    expect(String(refused.message)).toContain(`pid ${process.pid} on this host holds it`);
    other.give();
    await store.ack(claimed!);
    // The lock directory of the fallback is never made.
    expect(existsSync(join(stateDir, "mailboxes.lock"))).toBe(false);
  });

  test("excludes every other open file of it, in this process too; callers of one process queue on the mutex", async () => {
    const dir = tempDir("agent-mailbox-lock-");
    const a = openOsLock(join(dir, "x.flock"))!;
    const b = openOsLock(join(dir, "x.flock"))!;
    expect(a.tryTake()).toBe(true);
    expect(b.tryTake()).toBe(false);
    expect(a.holders()).toEqual([process.pid]);
    a.give();
    expect(b.tryTake()).toBe(true);
    b.give();

    // Many calls at once in one process: one at a time, all of them.
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(join(dir, "y.lock"), async () => {
          inside += 1;
          most = Math.max(most, inside);
          await Bun.sleep(1);
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  test("another process gets in as soon as this one is done", async () => {
    const stateDir = tempDir("agent-mailbox-lock-");
    const store = new FileMailboxStore({ stateDir });
    await store.send(message("x"));
    const sender = startWorker("send", stateDir, { tag: "child", to: ["alice"], count: 3 });
    expect(await sender.finished).toMatchObject({ exitCode: 0 });
    expect(sender.events.filter((e) => e.sent)).toHaveLength(3);
    const drained: string[] = [];
    for (let m = await store.claim("alice"); m; m = await store.claim("alice")) drained.push(m.content);
    expect(drained).toEqual(["x", "child-0", "child-1", "child-2"]);
  });

  test("the lock directory, where asked for (the fallback), is given back at the end of each call too", async () => {
    const stateDir = tempDir("agent-mailbox-lock-");
    const store = new FileMailboxStore({ stateDir, lock: { mechanism: "dir" } });
    await store.send(message("x"));
    const claimed = await store.claim("alice");
    expect(existsSync(join(stateDir, "mailboxes.lock"))).toBe(false);
    await store.ack(claimed!);
    expect(existsSync(join(stateDir, "mailboxes.lock.flock"))).toBe(false);
  });
});
