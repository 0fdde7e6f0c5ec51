// The per-mailbox index (mailboxes/<agent>/index): a fresh process's first claim
// over ids that carry no time, and `mailbox list`, read it instead of every file;
// it is rebuilt from the files when missing or damaged, and never trusted over them.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { join } from "node:path";
import { compareFifo, createMessage, type MailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { readIndex } from "../../src/mailbox/mailbox-index.ts";
import { type Fixture, countingReads, fixture } from "./helpers.ts";

// More than the few files a claim reads rather than open the index.
const COUNT = 60;

/** COUNT messages to alice with ids that carry no time, sent out of FIFO order; returned in FIFO order. */
async function seed(f: Fixture): Promise<MailboxMessage[]> {
  const made: MailboxMessage[] = [];
  for (let i = 0; i < COUNT; i++) made.push(f.message("alice", `m${i}`, { sender: i % 2 ? "bob" : "lead", kind: i % 3 ? "task" : "message" }));
  // Every third one sent late: the index is then not in FIFO order, and must not be trusted to be.
  for (const message of [...made.filter((_, i) => i % 3 !== 0), ...made.filter((_, i) => i % 3 === 0)]) await f.store.send(message);
  return [...made].sort(compareFifo);
}

async function claimAll(store: FileMailboxStore): Promise<string[]> {
  const ids: string[] = [];
  for (let m = await store.claim("alice"); m; m = await store.claim("alice")) ids.push(m.id);
  return ids;
}

const indexPath = (f: Fixture) => join(f.stateDir, "mailboxes", "alice", "index");
const readyFile = (f: Fixture, id: string) => join(f.stateDir, "mailboxes", "alice", "ready", `${id}.json`);

describe("the mailbox index", () => {
  test("a fresh store's first claim over foreign ids reads only the file it claims, and claims in exact FIFO order", async () => {
    const f = fixture();
    const sent = await seed(f);
    const { ops, messagesRead } = countingReads();
    const fresh = f.newStore({ fs: ops });
    const first = await fresh.claim("alice");
    expect(first?.id).toBe(sent[0]!.id);
    expect(messagesRead()).toEqual([readyFile(f, sent[0]!.id)]);
    expect([first!.id, ...(await claimAll(fresh))]).toEqual(sent.map((m) => m.id));
  });

  test("list describes every message from the index without reading one, with the fields of the files", async () => {
    const f = fixture();
    const sent = await seed(f);
    const worker = f.newStore();
    const claimed = (await worker.claim("alice"))!;
    await worker.ack(claimed);
    await worker.claim("alice");
    const { ops, messagesRead } = countingReads();
    const [listing] = await f.newStore({ fs: ops }).list();
    expect(messagesRead()).toEqual([]);
    expect(listing!.counts).toEqual({ ready: COUNT - 2, processing: 1, done: 1, quarantine: 0 });
    const expected = sent.map(({ id, sender, kind, createdAtUtc }) => ({ id, sender, kind, createdAtUtc, size: Buffer.byteLength(serializeMessage(sent.find((m) => m.id === id)!)) }));
    const listed = listing!.messages.map(({ id, sender, kind, createdAtUtc, size }) => ({ id, sender, kind, createdAtUtc, size }));
    expect([...listed].sort((a, b) => compareFifo(a as never, b as never))).toEqual(expected);
  });

  test("deleted: the first claim reads the files, claims in FIFO order and writes the index again; the next fresh store reads only the head", async () => {
    const f = fixture();
    const sent = await seed(f);
    fs.unlinkSync(indexPath(f));
    const first = countingReads();
    expect((await f.newStore({ fs: first.ops }).claim("alice"))?.id).toBe(sent[0]!.id);
    expect(first.messagesRead().length).toBeGreaterThan(COUNT - 1);
    expect(readIndex(fs, indexPath(f)).records.size).toBe(COUNT);
    const second = countingReads();
    const store = f.newStore({ fs: second.ops });
    expect((await store.claim("alice"))?.id).toBe(sent[1]!.id);
    expect(second.messagesRead()).toEqual([readyFile(f, sent[1]!.id)]);
    expect(await claimAll(store)).toEqual(sent.slice(2).map((m) => m.id));
  });

  test("a torn last record and a damaged one are skipped: those files are read, the order is exact, and the index is written again without them", async () => {
    const f = fixture();
    const sent = await seed(f);
    const text = fs.readFileSync(indexPath(f), "latin1");
    const lines = text.split("\n");
    // A digit of one record's time changed (its checksum no longer holds), and the last cut short, as a crash mid-append leaves it.
    const damaged = lines.findIndex((line) => line.includes(sent[0]!.id));
    lines[damaged] = lines[damaged]!.replace(sent[0]!.createdAtUtc, sent[0]!.createdAtUtc.replace("2026", "2099"));
    const tornId = lines.at(-1)!.slice(8, 44);
    lines[lines.length - 1] = lines.at(-1)!.slice(0, 50);
    fs.writeFileSync(indexPath(f), lines.join("\n"));
    const reads = countingReads();
    const store = f.newStore({ fs: reads.ops });
    expect((await store.claim("alice"))?.id).toBe(sent[0]!.id);
    // Read to be ordered (both), and the head again to be claimed.
    expect([...new Set(reads.messagesRead())].sort()).toEqual([readyFile(f, sent[0]!.id), readyFile(f, tornId)].sort());
    const after = readIndex(fs, indexPath(f));
    expect(after.bad).toBe(0);
    expect(after.records.size).toBe(COUNT);
    expect(await claimAll(store)).toEqual(sent.slice(1).map((m) => m.id));
  });

  test("a record of a message no longer there is neither claimed nor listed; a file rewritten since its record is described by what it says", async () => {
    const f = fixture();
    const sent = await seed(f);
    const removed = sent[0]!;
    fs.unlinkSync(readyFile(f, removed.id));
    // Rewritten by hand, as the oldest message, from someone else.
    const changed = sent[10]!;
    const rewritten = { ...changed, sender: "carol", createdAtUtc: "2026-03-01T11:00:00.000Z", content: "changed by hand" };
    fs.unlinkSync(readyFile(f, changed.id));
    fs.writeFileSync(readyFile(f, changed.id), serializeMessage(rewritten));
    const reads = countingReads();
    const [listing] = await f.newStore({ fs: reads.ops }).list();
    expect(listing!.messages.map((m) => m.id)).not.toContain(removed.id);
    expect(listing!.messages.find((m) => m.id === changed.id)).toMatchObject({ sender: "carol", createdAtUtc: rewritten.createdAtUtc });
    expect(reads.messagesRead()).toEqual([readyFile(f, changed.id)]);
    // A claim orders by the record until the file comes to the head, where it is read
    // and checked in full as always: delivered once, as the file says it now.
    const store = f.newStore();
    const claimed: MailboxMessage[] = [];
    for (let m = await store.claim("alice"); m; m = await store.claim("alice")) claimed.push(m);
    expect(claimed.map((m) => m.id).sort()).toEqual(sent.slice(1).map((m) => m.id).sort());
    expect(claimed.find((m) => m.id === changed.id)).toEqual(rewritten);
  });

  test("files written by an older version (no records) are read once, claimed in FIFO order among the others, and recorded", async () => {
    const f = fixture();
    const sent = await seed(f);
    // As a version without the index left them: files only, with their markers.
    const old = new SequentialIds("ffffffff-0000-4000-8000");
    const older: MailboxMessage[] = [];
    for (let i = 0; i < COUNT; i++) {
      const message = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: `old${i}` }, { clock: f.clock, ids: old });
      f.clock.advance(1);
      fs.writeFileSync(readyFile(f, message.id), serializeMessage(message));
      older.push(message);
    }
    const all = [...sent, ...older].sort(compareFifo);
    const first = countingReads();
    const store = f.newStore({ fs: first.ops });
    expect((await store.claim("alice"))?.id).toBe(all[0]!.id);
    expect(first.messagesRead()).toHaveLength(COUNT + 1);
    const second = countingReads();
    const again = f.newStore({ fs: second.ops });
    expect((await again.claim("alice"))?.id).toBe(all[1]!.id);
    expect(second.messagesRead()).toEqual([readyFile(f, all[1]!.id)]);
    expect(await claimAll(again)).toEqual(all.slice(2).map((m) => m.id));
  });

  test("a few messages waiting over a large index of finished ones are read, not looked up in it, and claimed in FIFO order", async () => {
    const f = fixture();
    // 1 300 finished messages (their records ~160 KB) — fsyncs skipped, the setup is not what is tested.
    const quick = f.newStore({ fs: { ...fs, fsyncSync: () => {} } });
    for (let i = 0; i < 1300; i++) {
      await quick.send(f.message("alice", `done${i}`));
      await quick.ack((await quick.claim("alice"))!);
    }
    const waiting = await seed(f);
    const reads = countingReads();
    const fresh = f.newStore({ fs: reads.ops });
    expect((await fresh.claim("alice"))?.id).toBe(waiting[0]!.id);
    // Reading 60 small files costs less than scanning 1 360 records for them.
    expect(reads.read).not.toContain(indexPath(f));
    expect(new Set(reads.messagesRead()).size).toBe(COUNT);
    expect(await claimAll(fresh)).toEqual(waiting.slice(1).map((m) => m.id));
  });

  test("prune forgets the records of the messages it deletes", async () => {
    const f = fixture();
    await seed(f);
    const store = f.newStore();
    for (let i = 0; i < 10; i++) await store.ack((await store.claim("alice"))!);
    expect(readIndex(fs, indexPath(f)).records.size).toBe(COUNT);
    const { pruned } = await store.prune(new Date("2100-01-01T00:00:00.000Z"));
    expect(pruned).toHaveLength(10);
    const { records } = readIndex(fs, indexPath(f));
    expect(records.size).toBe(COUNT - 10);
    for (const { id } of pruned) expect(records.has(`${id}.json`)).toBe(false);
  });
});
