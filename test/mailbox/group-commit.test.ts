import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { MailboxStorageError } from "../../src/core/errors.ts";
import { type FsOps, realFs } from "../../src/storage/fs-ops.ts";
import { fixture } from "./helpers.ts";

const isDir = (fd: number) => {
  try {
    return fs.fstatSync(fd).isDirectory();
  } catch {
    return false;
  }
};

/** The real calls, counting the directory fsyncs, failing them while `failDirs` is set. */
function counting(): FsOps & { dirFsyncs: number; failDirs: boolean } {
  const ops = { ...realFs, dirFsyncs: 0, failDirs: false } as FsOps & { dirFsyncs: number; failDirs: boolean };
  ops.fsyncSync = (fd: number) => {
    if (isDir(fd)) {
      ops.dirFsyncs += 1;
      if (ops.failDirs) throw Object.assign(new Error("EIO: injected directory fsync failure"), { code: "EIO" });
    }
    realFs.fsyncSync(fd);
  };
  return ops;
}

describe("group commit", () => {
  test("acks made at once are one take of the lock and one fsync of done/; each returns once its message is there", async () => {
    const f = fixture();
    const sent = Array.from({ length: 8 }, (_, i) => f.message("alice", `m${i}`));
    for (const m of sent) await f.store.send(m);
    const ops = counting();
    const store = f.newStore({ fs: ops });
    const claimed = [];
    for (let m = await store.claim("alice"); m; m = await store.claim("alice")) claimed.push(m);
    expect(claimed).toHaveLength(8);
    ops.dirFsyncs = 0;
    await Promise.all(
      claimed.map(async (m) => {
        await store.ack(m);
        expect(f.files("alice", "done")).toContain(`${m.id}.json`);
      }),
    );
    expect(ops.dirFsyncs).toBe(1);
    expect(f.files("alice", "processing")).toEqual([]);
  });

  test("sends to several mailboxes at once: one fsync per ready/; a failed one undoes the whole batch and fails every call", async () => {
    const f = fixture();
    const ops = counting();
    const store = f.newStore({ fs: ops });
    for (const agent of ["alice", "bob"]) await store.send(f.message(agent, "first")); // creates the directories
    ops.dirFsyncs = 0;
    await Promise.all([store.send(f.message("alice")), store.send(f.message("alice")), store.send(f.message("bob"))]);
    expect(ops.dirFsyncs).toBe(2);
    ops.failDirs = true;
    const batch = [f.message("alice", "a"), f.message("bob", "b"), f.message("alice", "c")];
    const results = await Promise.allSettled(batch.map((m) => store.send(m)));
    for (const result of results) {
      expect(result.status).toBe("rejected");
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(MailboxStorageError);
      expect(String((result as PromiseRejectedResult).reason.message)).toContain("undone");
    }
    expect(f.files("alice", "ready")).toHaveLength(3);
    expect(f.files("bob", "ready")).toHaveLength(2);
    expect(fs.readdirSync(`${f.stateDir}/mailboxes/.ids`)).toHaveLength(5);
    // The ids are not burnt: the same messages go once the disk is healthy.
    ops.failDirs = false;
    for (const m of batch) await store.send(m);
    expect(f.files("alice", "ready")).toHaveLength(5);
  });

  test("claimMany takes the oldest ready messages in order, up to its limit, with one fsync of processing/", async () => {
    const f = fixture();
    const sent = Array.from({ length: 5 }, (_, i) => f.message("alice", `m${i}`));
    for (const m of sent) await f.store.send(m);
    const ops = counting();
    const store = f.newStore({ fs: ops });
    const first = await store.claimMany("alice", 3);
    expect(first.map((m) => m.content)).toEqual(["m0", "m1", "m2"]);
    expect(ops.dirFsyncs).toBe(1);
    expect(f.files("alice", "processing").sort()).toEqual(first.map((m) => `${m.id}.json`).sort());
    const rest = await store.claimMany("alice", 64);
    expect(rest.map((m) => m.content)).toEqual(["m3", "m4"]);
    expect(await store.claimMany("alice", 64)).toEqual([]);
    expect(f.files("alice", "ready")).toEqual([]);
    expect(await store.claimMany("nobody", 64)).toEqual([]);
  });

  test("sendClaimed puts a message straight into processing/ with one fsync: acked, recovered and refused as a duplicate like a claimed one", async () => {
    const f = fixture();
    const ops = counting();
    const store = f.newStore({ fs: ops });
    await store.send(f.message("alice", "earlier")); // creates the directories
    ops.dirFsyncs = 0;
    const task = f.message("alice", "first task");
    await store.sendClaimed(task);
    expect(ops.dirFsyncs).toBe(1);
    expect(f.files("alice", "processing")).toEqual([`${task.id}.json`]);
    // Not in ready/: the next claim takes the older message, not this one.
    expect((await store.claim("alice"))?.content).toBe("earlier");
    await expect(store.send(task)).rejects.toThrow(/duplicate|already/i);
    await expect(store.sendClaimed(task)).rejects.toThrow(/duplicate|already/i);
    await store.ack(task);
    expect(f.files("alice", "done")).toContain(`${task.id}.json`);
    const second = f.message("alice", "second task");
    await store.sendClaimed(second);
    // A crash before its ack: recover gives it back to ready/, as for any claimed message.
    const recovered = await f.newStore().recover("alice");
    expect(recovered.recovered.map((r) => r.id)).toContain(second.id);
    expect(f.files("alice", "ready")).toContain(`${second.id}.json`);
  });
});
