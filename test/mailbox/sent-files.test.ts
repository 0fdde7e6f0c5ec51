// A claim of a message this store sent, whose file is provably unchanged, is not
// read again (src/mailbox/sent-files.ts); any change to the file, and any message
// another store or process sent, is read strictly as before.
import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage, type MailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { type FsOps, realFs } from "../../src/storage/fs-ops.ts";
import { type Fixture, fixture as baseFixture } from "./helpers.ts";

const WORKER = join(import.meta.dir, "../fixtures/mailbox-worker.ts");

/** The real calls, counting the files opened in a ready/ folder: a read of a message at claim. */
function countingReadyOpens(): { fs: FsOps; opens: string[] } {
  const opens: string[] = [];
  const fs: FsOps = {
    ...realFs,
    openSync: ((path: Parameters<typeof realFs.openSync>[0], ...rest: unknown[]) => {
      if (String(path).includes("/ready/")) opens.push(String(path).slice(String(path).lastIndexOf("/") + 1));
      return (realFs.openSync as (...args: unknown[]) => number)(path, ...rest);
    }) as FsOps["openSync"],
  };
  return { fs, opens };
}

/**
 * Messages with time-keyed ids, as the runtime sends: a first claim orders them by
 * name and opens none of them, so every open counted is the claim's read.
 */
function fixture(...args: Parameters<typeof baseFixture>): Fixture {
  const f = baseFixture(...args);
  f.message = (recipient: string, content = "do the thing"): MailboxMessage => {
    f.clock.advance(1);
    return createMessage({ sender: "lead", recipient, kind: "task", content }, { clock: f.clock, ids: uuidV7Source });
  };
  return f;
}

/** Overwrites the file in place (same inode, same size) with `text`. */
function rewriteInPlace(path: string, text: string): void {
  expect(Buffer.byteLength(text)).toBe(readFileSync(path).length);
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, text, 0);
  } finally {
    closeSync(fd);
  }
}

describe("a claim of a message this store sent", () => {
  test("takes the message it wrote without opening the file", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const sent = f.message("alice", "the task");
    await f.store.send(sent);
    const claimed = await f.store.claim("alice");
    expect(claimed).toEqual(sent);
    expect(counted.opens).toEqual([]);
    await f.store.ack(claimed!);
    expect(f.files("alice", "done")).toEqual([`${sent.id}.json`]);
  });

  test("a file rewritten in place after the send (same size, other content) is read and delivered as written", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const sent = f.message("alice", "content A");
    await f.store.send(sent);
    const path = join(f.stateDir, "mailboxes/alice/ready", `${sent.id}.json`);
    rewriteInPlace(path, serializeMessage({ ...sent, content: "content B" }));
    const claimed = await f.store.claim("alice");
    expect(claimed!.content).toBe("content B");
    expect(counted.opens).toEqual([`${sent.id}.json`]);
  });

  test("a file rewritten in place into bytes that are no message is quarantined, and the next is delivered", async () => {
    const f = fixture();
    const bad = f.message("alice");
    const good = f.message("alice");
    await f.store.send(bad);
    await f.store.send(good);
    const path = join(f.stateDir, "mailboxes/alice/ready", `${bad.id}.json`);
    rewriteInPlace(path, "x".repeat(readFileSync(path).length));
    expect((await f.store.claim("alice"))!.id).toBe(good.id);
    expect(f.files("alice", "ready")).toEqual([]);
    const quarantined = f.files("alice", "quarantine");
    expect(quarantined.some((name) => name.startsWith(bad.id) && !name.endsWith(".reason.json"))).toBe(true);
  });

  test("a file replaced by a rename after the send is read", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const sent = f.message("alice", "content A");
    await f.store.send(sent);
    const path = join(f.stateDir, "mailboxes/alice/ready", `${sent.id}.json`);
    writeFileSync(`${path}.new`, serializeMessage({ ...sent, content: "content B" }));
    renameSync(`${path}.new`, path);
    const claimed = await f.store.claim("alice");
    expect(claimed!.content).toBe("content B");
    expect(counted.opens).toEqual([`${sent.id}.json`]);
  });

  test("a message another store sent, in this process or another, is read", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const fromHere = f.message("alice", "from another store here");
    await f.newStore({ fs: realFs }).send(fromHere);

    const child = Bun.spawnSync(
      [process.execPath, WORKER, "send", f.stateDir, JSON.stringify({ tag: "child", to: ["alice"], count: 1 })],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(child.exitCode).toBe(0);
    const fromChild = JSON.parse(child.stdout.toString().trim().split("\n").at(-1)!).sent as string;

    const first = await f.store.claim("alice");
    const second = await f.store.claim("alice");
    expect([first!.id, second!.id].sort()).toEqual([fromHere.id, fromChild].sort());
    expect(counted.opens.sort()).toEqual([`${fromHere.id}.json`, `${fromChild}.json`].sort());
  });

  test("at most sentFilesBound sent files are remembered: the oldest is read at claim", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs, sentFilesBound: 2 });
    const sent = [f.message("alice"), f.message("alice"), f.message("alice")];
    for (const m of sent) await f.store.send(m);
    for (const m of sent) expect((await f.store.claim("alice"))!.id).toBe(m.id);
    expect(counted.opens).toEqual([`${sent[0]!.id}.json`]);
  });

  test("at most 16 MiB of sent files are remembered: the oldest large one is read at claim", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const sent = Array.from({ length: 17 }, () => f.message("alice", "x".repeat(1_000_000)));
    for (const m of sent) await f.store.send(m);
    for (const m of sent) expect((await f.store.claim("alice"))!.id).toBe(m.id);
    expect(counted.opens).toEqual([`${sent[0]!.id}.json`]);
  });

  test("a message released back to ready/ is read at its next claim", async () => {
    const counted = countingReadyOpens();
    const f = fixture({ fs: counted.fs });
    const sent = f.message("alice");
    await f.store.send(sent);
    await f.store.release((await f.store.claim("alice"))!);
    expect(counted.opens).toEqual([]);
    expect((await f.store.claim("alice"))!.id).toBe(sent.id);
    expect(counted.opens).toEqual([`${sent.id}.json`]);
  });
});
