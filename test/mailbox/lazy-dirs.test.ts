// A mailbox starts with ready/ and processing/; done/ is made by its first
// claim (for that message's ack, while it is worked) or ack, and quarantine/ by
// its first quarantine (a spawn of 32 teammates makes 64 fewer inodes). Every
// reader takes a missing one as empty.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { fixture } from "./helpers.ts";

const dirsOf = (stateDir: string, agent: string) => readdirSync(join(stateDir, "mailboxes", agent)).filter((name) => name !== "index").sort();

describe("a mailbox's directories", () => {
  test("made: ready/ and processing/; the first claim makes done/, the first quarantine quarantine/", async () => {
    const f = fixture();
    await f.store.prepare("alice");
    expect(dirsOf(f.stateDir, "alice")).toEqual(["processing", "ready"]);
    const [first, second] = [f.message("alice", "one"), f.message("alice", "two")];
    await f.store.send(first);
    await f.store.send(second);
    // Listed and counted without them.
    expect((await f.store.list()).find((listing) => listing.name === "alice")?.counts).toEqual({ ready: 2, processing: 0, done: 0, quarantine: 0 });
    expect(await f.store.find(first.id)).toMatchObject({ state: "ready" });
    const claimed = (await f.store.claim("alice"))!;
    // Made while the message is worked, before its ack (in the background: waited for here).
    for (let i = 0; i < 200 && !existsSync(join(f.stateDir, "mailboxes/alice/done")); i++) await Bun.sleep(10);
    expect(dirsOf(f.stateDir, "alice")).toEqual(["done", "processing", "ready"]);
    expect(f.files("alice", "done")).toEqual([]);
    await f.store.ack(claimed);
    expect(f.files("alice", "done")).toEqual([`${first.id}.json`]);
    const next = (await f.store.claim("alice"))!;
    await f.store.quarantine(next, "a bad one");
    expect(dirsOf(f.stateDir, "alice")).toEqual(["done", "processing", "quarantine", "ready"]);
    expect(f.files("alice", "quarantine")).toEqual([`${second.id}.json`, `${second.id}.json.reason.json`]);
    expect(await f.store.find(second.id)).toMatchObject({ state: "quarantine" });
  });

  test("done/ removed after this store made it: the next ack makes it again", async () => {
    const f = fixture();
    const [first, second] = [f.message("alice", "one"), f.message("alice", "two")];
    await f.store.send(first);
    await f.store.send(second);
    await f.store.ack((await f.store.claim("alice"))!);
    // Emptied and removed by hand (an operator cleaning up).
    await f.store.prune(new Date("2100-01-01T00:00:00Z"));
    rmdirSync(join(f.stateDir, "mailboxes/alice/done"));
    const claimed = (await f.store.ackAndClaim((await f.store.claim("alice"))!, "alice"));
    expect(claimed).toBeNull();
    expect(f.files("alice", "done")).toEqual([`${second.id}.json`]);
  });

  test("claimed many at once: done/ made for their acks", async () => {
    const f = fixture();
    for (const text of ["one", "two", "three"]) await f.store.send(f.message("alice", text));
    const claimed = await f.store.claimMany("alice", 2);
    expect(claimed).toHaveLength(2);
    for (let i = 0; i < 200 && !existsSync(join(f.stateDir, "mailboxes/alice/done")); i++) await Bun.sleep(10);
    expect(dirsOf(f.stateDir, "alice")).toEqual(["done", "processing", "ready"]);
    await Promise.all(claimed.map((message) => f.store.ack(message)));
    expect(f.files("alice", "done")).toHaveLength(2);
  });

  test("sent straight into processing/ (a task for a teammate of this process): done/ made for its ack", async () => {
    const f = fixture();
    await f.store.prepare("alice");
    const task = f.message("alice", "the task");
    await f.store.sendClaimed(task);
    for (let i = 0; i < 200 && !existsSync(join(f.stateDir, "mailboxes/alice/done")); i++) await Bun.sleep(10);
    expect(dirsOf(f.stateDir, "alice")).toEqual(["done", "processing", "ready"]);
    await f.store.ack(task);
    expect(f.files("alice", "done")).toEqual([`${task.id}.json`]);
  });

  test("an ack of a message not in processing/ still fails as such, done/ or not", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    await expect(f.store.ack(m)).rejects.toThrow("it is not in processing/");
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
    expect(f.files("alice", "done")).toEqual([]);
  });
});
