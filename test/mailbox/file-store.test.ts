// What only the file backend has: files, directories, permissions, quarantine
// evidence on disk, id markers. The behaviour every backend shares is the
// contract suite (contract.test.ts), run against this store and PostgreSQL.
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serializeMessage } from "../../src/core/message.ts";
import { fixture } from "./helpers.ts";

describe("send, claim, ack", () => {
  test("a message is one <id>.json file, moved ready/ → processing/ → done/, content byte-for-byte", async () => {
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

  test("files are 0600 and directories 0700", async () => {
    const f = fixture();
    const sent = f.message("alice");
    await f.store.send(sent);
    const { statSync } = await import("node:fs");
    expect(statSync(join(f.stateDir, "mailboxes/alice/ready", `${sent.id}.json`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(f.stateDir, "mailboxes/alice/ready")).mode & 0o777).toBe(0o700);
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

});

describe("list, find, prune", () => {
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
