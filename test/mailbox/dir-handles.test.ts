import { describe, expect, test } from "bun:test";
import { existsSync, fstatSync } from "node:fs";
import { dirHandle, forgetDirHandle, pinned } from "../../src/storage/dir-handles.ts";
import { realFs } from "../../src/storage/fs-ops.ts";
import { join } from "node:path";
import { startWorker } from "../fixtures/mailbox-worker.ts";
import { fixture } from "./helpers.ts";

// A store moves messages between directory descriptors it keeps open
// (storage/dir-handles.ts). A descriptor names the directory it was opened on, so
// one kept from before a directory was removed must never receive a message: it
// would be in no directory anyone can reach, and its fsync would commit nothing
// that matters. These tests remove directories under a store that holds
// descriptors of them, from other processes, and follow every message by path.

function inOtherProcess(...command: string[]) {
  const done = Bun.spawnSync(command, { stdout: "ignore", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${command.join(" ")}: ${done.stderr.toString()}`);
}

describe("kept directory descriptors", () => {
  test("a mailbox removed, then made again by another process's send, is used again at once", async () => {
    const f = fixture();
    const first = f.message("alice", "before");
    await f.store.send(first);
    await f.store.ack((await f.store.claim("alice"))!);
    expect(f.files("alice", "done")).toEqual([`${first.id}.json`]);

    const agentDir = join(f.stateDir, "mailboxes", "alice");
    inOtherProcess("rm", "-rf", agentDir);
    const sender = startWorker("send", f.stateDir, { tag: "after", to: ["alice"], count: 1 });
    expect(await sender.finished).toMatchObject({ exitCode: 0 });
    const sent = sender.events.find((e) => e.sent)!.sent!;

    const claimed = await f.store.claim("alice");
    expect(claimed?.content).toBe("after-0");
    expect(f.files("alice", "ready")).toEqual([]);
    expect(f.files("alice", "processing")).toEqual([`${sent}.json`]);
    await f.store.ack(claimed!);
    expect(f.files("alice", "processing")).toEqual([]);
    expect(f.files("alice", "done")).toEqual([`${sent}.json`]);
  });

  test("a destination directory removed and made again between two calls receives the next move, not the removed one", async () => {
    const f = fixture();
    const [a, b] = [f.message("alice", "a"), f.message("alice", "b")];
    await f.store.send(a);
    await f.store.send(b);
    await f.store.ack((await f.store.claim("alice"))!);

    const done = join(f.stateDir, "mailboxes", "alice", "done");
    inOtherProcess("sh", "-c", `rm -rf "${done}" && mkdir -m 700 "${done}"`);
    const processing = join(f.stateDir, "mailboxes", "alice", "processing");
    inOtherProcess("sh", "-c", `rmdir "${processing}" && mkdir -m 700 "${processing}"`);

    const claimed = await f.store.claim("alice");
    expect(claimed?.id).toBe(b.id);
    expect(f.files("alice", "processing")).toEqual([`${b.id}.json`]);
    await f.store.ack(claimed!);
    expect(f.files("alice", "done")).toEqual([`${b.id}.json`]);
    expect(existsSync(join(processing, `${b.id}.json`))).toBe(false);
  });

  test("an ack of a message that left processing/ still fails clearly after the retry through fresh descriptors", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    const claimed = (await f.store.claim("alice"))!;
    await f.store.release(claimed);
    await expect(f.store.ack(claimed)).rejects.toThrow("it is not in processing/");
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
  });
});

describe("a pinned descriptor", () => {
  test("stays open while an fsync waits on it, even when forgotten meanwhile; closed once the pin ends", async () => {
    const f = fixture();
    await f.store.send(f.message("alice"));
    const dir = join(f.stateDir, "mailboxes", "alice", "ready");
    const fd = dirHandle(dir, realFs);
    const release = Promise.withResolvers<void>();
    const use = pinned(fd, realFs, async () => {
      await release.promise;
      // Still this directory's descriptor: forgetting it did not close it under the fsync.
      return fstatSync(fd).isDirectory();
    });
    forgetDirHandle(dir, realFs);
    release.resolve();
    expect(await use).toBe(true);
    expect(() => fstatSync(fd)).toThrow();
  });
});
