import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  AckConflictError,
  DuplicateMessageIdError,
  InvalidAgentNameError,
  InvalidMessageError,
  MailboxStorageError,
} from "../../src/core/errors.ts";
import { type MailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { fixture } from "./helpers.ts";

describe("send, claim, ack", () => {
  test("a message goes ready → processing → done and comes back byte-for-byte", async () => {
    const f = fixture();
    const content = "  leading and trailing spaces, tabs\t, newlines\n\nünïcödé ✓ 🚀\r\n  ";
    const sent = f.message("alice", content);
    await f.store.send(sent);
    expect(f.files("alice", "ready")).toEqual([`${sent.id}.json`]);

    const claimed = await f.store.claim("alice");
    expect(claimed).toEqual(sent);
    expect(claimed!.content).toBe(content);
    expect(f.files("alice", "ready")).toEqual([]);
    expect(f.files("alice", "processing")).toEqual([`${sent.id}.json`]);

    await f.store.ack(claimed!);
    expect(f.files("alice", "processing")).toEqual([]);
    expect(f.files("alice", "done")).toEqual([`${sent.id}.json`]);
    const onDisk = readFileSync(join(f.stateDir, "mailboxes/alice/done", `${sent.id}.json`), "utf8");
    expect(JSON.parse(onDisk).content).toBe(content);
  });

  test("claim on an empty or absent mailbox returns null", async () => {
    const f = fixture();
    expect(await f.store.claim("nobody")).toBeNull();
    await f.store.send(f.message("alice"));
    await f.store.claim("alice");
    expect(await f.store.claim("alice")).toBeNull();
  });

  test("files are 0600 and directories 0700", async () => {
    const f = fixture();
    const sent = f.message("alice");
    await f.store.send(sent);
    const { statSync } = await import("node:fs");
    expect(statSync(join(f.stateDir, "mailboxes/alice/ready", `${sent.id}.json`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(f.stateDir, "mailboxes/alice/ready")).mode & 0o777).toBe(0o700);
  });

  test("a bad name or a bad message is refused before anything is written", async () => {
    const f = fixture();
    await expect(f.store.claim("Bob")).rejects.toBeInstanceOf(InvalidAgentNameError);
    await expect(f.store.recover("../etc")).rejects.toBeInstanceOf(InvalidAgentNameError);
    const good = f.message("alice");
    const extra = { ...good, extra: 1 } as unknown as MailboxMessage;
    await expect(f.store.send(extra)).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(f.store.send({ ...good, content: "" })).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(f.store.send({ ...good, recipient: "con" })).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(f.store.send({ ...good, idempotencyKey: f.ids.next() })).rejects.toBeInstanceOf(InvalidMessageError);
    expect(existsSync(join(f.stateDir, "mailboxes"))).toBe(false);
  });
});

describe("FIFO by (createdAtUtc, id)", () => {
  test("equal timestamps are ordered by id, whatever order they were sent in", async () => {
    const f = fixture();
    const at = "2026-03-01T12:00:00.000Z";
    const ids = ["00000000-0000-4000-8000-00000000000c", "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"];
    for (const id of ids) {
      await f.store.send({ id, idempotencyKey: id, sender: "lead", recipient: "alice", kind: "task", content: id, createdAtUtc: at });
    }
    const order: string[] = [];
    for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) order.push(m.id);
    expect(order).toEqual([...ids].sort());
  });

  test("the time decides, not the file name", async () => {
    const f = fixture();
    // ids in descending name order, times ascending
    const sent = ["ffffffff-0000-4000-8000-000000000000", "88888888-0000-4000-8000-000000000000", "11111111-0000-4000-8000-000000000000"].map(
      (id, i) => ({ id, idempotencyKey: id, sender: "lead", recipient: "alice", kind: "task" as const, content: `#${i}`, createdAtUtc: `2026-03-01T12:00:0${i}.000Z` }),
    );
    for (const m of sent) await f.store.send(m);
    const order: string[] = [];
    for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) order.push(m.content);
    expect(order).toEqual(["#0", "#1", "#2"]);
  });

  test("a released message goes back to its place in the queue", async () => {
    const f = fixture();
    const [a, b, c] = [f.message("alice", "a"), f.message("alice", "b"), f.message("alice", "c")];
    for (const m of [a, b, c]) await f.store.send(m!);
    const first = await f.store.claim("alice");
    expect(first!.content).toBe("a");
    await f.store.release(first!);
    expect((await f.store.claim("alice"))!.content).toBe("a");
    expect((await f.store.claim("alice"))!.content).toBe("b");
  });
});

describe("global id uniqueness", () => {
  test("a duplicate id fails loudly and never overwrites, in any agent and state", async () => {
    const f = fixture();
    const original = f.message("alice", "original");
    await f.store.send(original);
    const sameId = (recipient: string) => ({ ...original, recipient, content: "impostor" });

    await expect(f.store.send(sameId("alice"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
    await expect(f.store.send(sameId("bob"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
    const claimed = await f.store.claim("alice");
    await expect(f.store.send(sameId("bob"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
    await f.store.ack(claimed!);
    await expect(f.store.send(sameId("carol"))).rejects.toBeInstanceOf(DuplicateMessageIdError);

    expect(f.files("bob", "ready")).toEqual([]);
    expect(f.files("carol", "ready")).toEqual([]);
    const done = readFileSync(join(f.stateDir, "mailboxes/alice/done", `${original.id}.json`), "utf8");
    expect(JSON.parse(done).content).toBe("original");
  });

  test("a quarantined id stays taken", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    await f.store.quarantine((await f.store.claim("alice"))!, "it failed");
    await expect(f.store.send({ ...m, recipient: "bob" })).rejects.toBeInstanceOf(DuplicateMessageIdError);
  });
});

describe("ack", () => {
  test("is idempotent for the same message", async () => {
    const f = fixture();
    await f.store.send(f.message("alice"));
    const m = (await f.store.claim("alice"))!;
    await f.store.ack(m);
    await f.store.ack(m);
    await f.newStore().ack(m);
    expect(f.files("alice", "done")).toEqual([`${m.id}.json`]);
    expect(f.files("alice", "ready")).toEqual([]);
  });

  test("conflicts when done/ holds different content under the id", async () => {
    const f = fixture();
    await f.store.send(f.message("alice"));
    const m = (await f.store.claim("alice"))!;
    await f.store.ack(m);
    const error = await f.store.ack({ ...m, content: "something else" }).catch((e) => e);
    expect(error).toBeInstanceOf(AckConflictError);
    expect(error).toBeInstanceOf(MailboxStorageError);
  });

  test("a late ack after another runtime recovered, re-claimed and finished it does not re-queue it", async () => {
    const f = fixture();
    await f.store.send(f.message("alice"));
    const first = (await f.store.claim("alice"))!;
    const other = f.newStore();
    expect((await other.recover("alice")).recovered).toEqual([{ agent: "alice", id: first.id }]);
    const again = (await other.claim("alice"))!;
    await other.ack(again);
    await f.store.ack(first);
    expect(f.files("alice", "done")).toEqual([`${first.id}.json`]);
    expect(f.files("alice", "ready")).toEqual([]);
    expect(f.files("alice", "processing")).toEqual([]);
  });

  test("of a message that is not in processing fails clearly and moves nothing", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    const error = await f.store.ack(m).catch((e) => e);
    expect(error).toBeInstanceOf(MailboxStorageError);
    expect(error.message).toContain("not in processing/");
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
  });
});

describe("release, quarantine, recover", () => {
  test("quarantine keeps both pieces of evidence under fresh names and records why", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    await f.store.quarantine((await f.store.claim("alice"))!, "first failure");
    // Same id again, as an operator might drop a retry by hand.
    writeFileSync(join(f.stateDir, "mailboxes/alice/processing", `${m.id}.json`), serializeMessage(m));
    await f.store.quarantine(m, "second failure");
    const files = f.files("alice", "quarantine");
    expect(files).toEqual([`${m.id}.json`, `${m.id}.json.1`, `${m.id}.json.1.reason.json`, `${m.id}.json.reason.json`]);
    const reasons = files.filter((x) => x.endsWith(".reason.json")).map((x) => JSON.parse(readFileSync(join(f.stateDir, "mailboxes/alice/quarantine", x), "utf8")).reason);
    expect(reasons.sort()).toEqual(["first failure", "second failure"]);
    const listing = await f.store.list({ agent: "alice", state: "quarantine" });
    expect(listing[0]!.counts.quarantine).toBe(2);
    expect(listing[0]!.messages.map((e) => e.reason).sort()).toEqual(["first failure", "second failure"]);
  });

  test("recover moves processing back to ready and quarantines what is not a valid message", async () => {
    const f = fixture();
    const [a, b] = [f.message("alice", "a"), f.message("alice", "b")];
    await f.store.send(a);
    await f.store.send(b);
    await f.store.claim("alice");
    await f.store.claim("alice");
    writeFileSync(join(f.stateDir, "mailboxes/alice/processing/garbage.json"), "{");
    const result = await f.newStore().recover("alice");
    expect(result.recovered.map((r) => r.id)).toEqual([a.id, b.id]);
    expect(result.skipped).toEqual([{ agent: "alice", file: "garbage.json", reason: expect.stringContaining("quarantined") }]);
    expect(f.files("alice", "processing")).toEqual([]);
    expect((await f.store.claim("alice"))!.id).toBe(a.id);
  });

  test("release of a message not in processing fails and changes nothing", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    await expect(f.store.release(m)).rejects.toBeInstanceOf(MailboxStorageError);
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
  });
});

describe("strict validation at claim", () => {
  test("each kind of bad entry is quarantined with a reason and valid messages behind it are delivered", async () => {
    const f = fixture();
    const good1 = f.message("alice", "good 1");
    const good2 = f.message("alice", "good 2");
    await f.store.send(good1);
    await f.store.send(good2);
    const ready = join(f.stateDir, "mailboxes/alice/ready");
    const other = f.message("bob");
    const badId = f.ids.next();
    const bad: Record<string, string | Uint8Array> = {
      "notes.txt": "hello",
      "not-a-uuid.json": serializeMessage(good1),
      [`${f.ids.next()}.json`]: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
      [`${f.ids.next()}.json`]: "{ not json",
      [`${badId}.json`]: JSON.stringify({ ...good1, id: badId, idempotencyKey: badId, extra: true }),
      [`${f.ids.next()}.json`]: serializeMessage(good1), // id does not match the name
      [`${other.id}.json`]: serializeMessage(other), // recipient is bob
      [`${f.ids.next()}.JSON`]: serializeMessage(good1),
    };
    for (const [name, content] of Object.entries(bad)) writeFileSync(join(ready, name), content);
    mkdirSync(join(ready, `${f.ids.next()}.json`));
    symlinkSync(join(ready, `${good1.id}.json`), join(ready, `${f.ids.next()}.json`));

    expect((await f.store.claim("alice"))!.content).toBe("good 1");
    expect((await f.store.claim("alice"))!.content).toBe("good 2");
    expect(await f.store.claim("alice")).toBeNull();
    expect(f.files("alice", "ready")).toEqual([]);

    const [listing] = await f.store.list({ agent: "alice", state: "quarantine" });
    expect(listing!.counts.quarantine).toBe(10);
    const reasons = listing!.messages.map((e) => e.reason!).join("\n");
    for (const expected of [
      "does not end in .json",
      "not a canonical lowercase UUID",
      "not valid UTF-8",
      "not valid JSON",
      "Unrecognized key",
      "does not match the file name",
      'recipient "bob" does not match',
      "is a directory",
      "symbolic link",
    ]) {
      expect(reasons).toContain(expected);
    }
  });

  test("a file dropped into ready/ by hand is seen by a store that already cached the queue", async () => {
    const f = fixture();
    await f.store.send(f.message("alice", "first"));
    const dropped = f.message("alice", "dropped by hand");
    expect((await f.store.claim("alice"))!.content).toBe("first");
    writeFileSync(join(f.stateDir, "mailboxes/alice/ready", `${dropped.id}.json`), serializeMessage(dropped));
    expect((await f.store.claim("alice"))!.content).toBe("dropped by hand");
  });

  test("messages sent by another store instance are seen, in order", async () => {
    const f = fixture();
    const other = f.newStore();
    await f.store.send(f.message("alice", "1"));
    expect((await f.store.claim("alice"))!.content).toBe("1");
    for (const c of ["2", "3"]) await other.send(f.message("alice", c));
    await f.store.send(f.message("alice", "4"));
    const seen: string[] = [];
    for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) seen.push(m.content);
    expect(seen).toEqual(["2", "3", "4"]);
  });
});

describe("list, find, prune", () => {
  test("list counts every state and find locates a message", async () => {
    const f = fixture();
    const [a, b, c] = [f.message("alice"), f.message("alice"), f.message("bob", "for bob", { kind: "message" })];
    for (const m of [a, b, c]) await f.store.send(m!);
    await f.store.ack((await f.store.claim("alice"))!);
    await f.store.claim("alice");
    const listing = await f.store.list();
    expect(listing.map((l) => [l.name, l.counts])).toEqual([
      ["alice", { ready: 0, processing: 1, done: 1, quarantine: 0 }],
      ["bob", { ready: 1, processing: 0, done: 0, quarantine: 0 }],
    ]);
    expect(listing[1]!.messages[0]).toMatchObject({ id: c.id, sender: "lead", kind: "message", state: "ready" });
    expect(await f.store.find(b.id)).toMatchObject({ agent: "alice", state: "processing", message: b });
    expect(await f.store.find(f.ids.next())).toBeNull();
    expect(await f.store.agents()).toEqual(["alice", "bob"]);
  });

  test("prune deletes done messages older than the cutoff and their id markers", async () => {
    const f = fixture();
    const old = f.message("alice", "old");
    await f.store.send(old);
    await f.store.ack((await f.store.claim("alice"))!);
    f.clock.advance(3_600_000);
    const recent = f.message("alice", "recent");
    await f.store.send(recent);
    await f.store.ack((await f.store.claim("alice"))!);
    const result = await f.store.prune(new Date(f.clock.now().getTime() - 60_000));
    expect(result.pruned).toEqual([{ agent: "alice", id: old.id }]);
    expect(f.files("alice", "done")).toEqual([`${recent.id}.json`]);
    expect(readdirSync(join(f.stateDir, "mailboxes/.ids"))).toEqual([recent.id]);
    expect(result.orphanMarkers).toBe(0);
  });

  test("prune removes old orphan id markers left by a send that died before its link", async () => {
    const f = fixture();
    const live = f.message("alice");
    await f.store.send(live);
    const orphan = join(f.stateDir, "mailboxes/.ids", f.ids.next());
    writeFileSync(orphan, "{}");
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(orphan, anHourAgo, anHourAgo);
    utimesSync(join(f.stateDir, "mailboxes/.ids", live.id), anHourAgo, anHourAgo);
    const result = await f.store.prune(new Date(Date.now() - 60_000));
    expect(result).toEqual({ pruned: [], orphanMarkers: 1 });
    expect(readdirSync(join(f.stateDir, "mailboxes/.ids"))).toEqual([live.id]);
  });
});
