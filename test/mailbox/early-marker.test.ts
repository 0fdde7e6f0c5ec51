// A send writes and fsyncs its message (its id marker) before it takes the
// mailbox lock, so under the lock it is a link alone; whatever happened to the
// marker meanwhile — removed, replaced by another sender of the same id, an
// orphan of a killed send — is settled under the lock, and each id is still
// delivered once.
import { describe, expect, test } from "bun:test";
import { existsSync, linkSync, lstatSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuplicateMessageIdError } from "../../src/core/errors.ts";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { serializeMessage } from "../../src/core/message-format.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { fileNameOf } from "../../src/mailbox/paths.ts";
import { realFs } from "../../src/storage/fs-ops.ts";
import { openOsLock } from "../../src/storage/os-lock.ts";
import { tempDir } from "../support/temp-dir.ts";
import { waitUntil } from "../support/deadline.ts";

const message = (content: string, recipient = "bob") => createMessage({ sender: "lead", recipient, kind: "task", content }, { clock: systemClock, ids: uuidV7Source });

/**
 * The store, a message, and its paths; the mailbox lock taken from another open file, as another process would hold it.
 *
 * `looked`, with `watchLook`: settles once the send has looked at the marker it
 * wrote (its identity, kept to compare with what it links). With realFs the write
 * is a thread-pool task and the look follows its answer on the event loop, a moment
 * after the file is whole: a file put in its place within that moment is taken for
 * this send's own — harmless (a sender of the same id sends the same message, and
 * it is delivered once), but not the case a test of a marker replaced *after* the
 * look means to make. Watching the look goes through an FsOps of the test's, which
 * writes the marker synchronously.
 */
async function world(options: { watchLook?: boolean } = {}) {
  const stateDir = tempDir("agent-early-marker-");
  const m = message("the task");
  const marker = join(stateDir, "mailboxes/.ids", m.id);
  const looked = Promise.withResolvers<void>();
  const lstatSync = ((path: string, ...rest: never[]) => {
    const stats = (realFs.lstatSync as (path: string, ...rest: never[]) => unknown)(path, ...rest);
    if (path === marker) looked.resolve();
    return stats;
  }) as typeof realFs.lstatSync;
  const store = new FileMailboxStore({ stateDir, ...(options.watchLook ? { fs: { ...realFs, lstatSync } } : {}) });
  await store.prepare("bob");
  const other = openOsLock(join(stateDir, "mailboxes.lock.flock"))!;
  expect(other.tryTake()).toBe(true);
  const ready = join(stateDir, "mailboxes/bob/ready", fileNameOf(m.id));
  return { stateDir, store, other, m, marker, ready, looked: looked.promise };
}

async function until(check: () => boolean): Promise<void> {
  await waitUntil(check, "the condition")
}

describe("a send's message is written before the lock", () => {
  test("while another holds the lock: the marker is whole and durable, not yet in ready/; the send returns once linked", async () => {
    const w = await world();
    let sent = false;
    const sending = w.store.send(w.m).finally(() => (sent = true));
    await until(() => existsSync(w.marker) && readFileSync(w.marker, "utf8") === serializeMessage(w.m));
    // The marker is whole while the lock is still held: a send that did not wait for the lock would have linked it by now.
    expect(sent).toBe(false);
    expect(existsSync(w.ready)).toBe(false);
    w.other.give();
    await sending;
    expect(readFileSync(w.ready, "utf8")).toBe(serializeMessage(w.m));
    expect(lstatSync(w.marker).nlink).toBe(2);
    expect(await w.store.claim("bob")).toEqual(w.m);
  });

  test("its marker removed meanwhile (a prune): written again under the lock, and delivered", async () => {
    const w = await world();
    const sending = w.store.send(w.m);
    await until(() => existsSync(w.marker) && readFileSync(w.marker, "utf8") === serializeMessage(w.m));
    unlinkSync(w.marker);
    w.other.give();
    await sending;
    expect(readFileSync(w.ready, "utf8")).toBe(serializeMessage(w.m));
    expect(lstatSync(w.marker).nlink).toBe(2);
    expect(await w.store.claim("bob")).toEqual(w.m);
  });

  test("its marker replaced meanwhile by another sender of the id (not linked yet): this send's own content is delivered, once", async () => {
    const w = await world({ watchLook: true });
    const sending = w.store.send(w.m);
    await w.looked;
    expect(readFileSync(w.marker, "utf8")).toBe(serializeMessage(w.m));
    // Another file in its place, as a sender that found it unlinked under the lock leaves it before its own link.
    const impostor = serializeMessage({ ...w.m, content: "another sender's content" });
    unlinkSync(w.marker);
    writeFileSync(w.marker, impostor);
    w.other.give();
    await sending;
    expect(readFileSync(w.ready, "utf8")).toBe(serializeMessage(w.m));
    expect(lstatSync(w.marker).nlink).toBe(2);
    // The id is taken now: a second send of it is refused, before or after the lock.
    await expect(w.store.send(w.m)).rejects.toBeInstanceOf(DuplicateMessageIdError);
    expect(await w.store.claim("bob")).toEqual(w.m);
    expect(await w.store.claim("bob")).toBeNull();
  });

  test("its marker replaced meanwhile by another sender of the id that delivered it already: refused as a duplicate, the other's message and marker untouched", async () => {
    const w = await world({ watchLook: true });
    const sending = w.store.send(w.m);
    await w.looked;
    expect(readFileSync(w.marker, "utf8")).toBe(serializeMessage(w.m));
    // What the other sender leaves once its batch is done: its own file as the marker, linked in ready/.
    const theirs = serializeMessage({ ...w.m, content: "another sender's content" });
    unlinkSync(w.marker);
    writeFileSync(w.marker, theirs);
    linkSync(w.marker, w.ready);
    w.other.give();
    await expect(sending).rejects.toBeInstanceOf(DuplicateMessageIdError);
    expect(readFileSync(w.ready, "utf8")).toBe(theirs);
    expect(lstatSync(w.marker).nlink).toBe(2);
  });

  test("an orphan marker a killed send left: the retry delivers the message", async () => {
    const w = await world();
    w.other.give();
    writeFileSync(w.marker, "{half a mess");
    await w.store.send(w.m);
    expect(readFileSync(w.ready, "utf8")).toBe(serializeMessage(w.m));
    expect(await w.store.claim("bob")).toEqual(w.m);
  });

  test("two sends of one id at once: one is delivered, the other is refused as a duplicate", async () => {
    const w = await world();
    const copy = new FileMailboxStore({ stateDir: w.stateDir });
    const outcomes = Promise.allSettled([w.store.send(w.m), copy.send({ ...w.m, content: "the same id again" })]);
    await Bun.sleep(20);
    w.other.give();
    const [first, second] = await outcomes;
    expect([first.status, second.status].sort()).toEqual(["fulfilled", "rejected"]);
    const refused = [first, second].find((outcome) => outcome.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(DuplicateMessageIdError);
    expect(lstatSync(w.marker).nlink).toBe(2);
    const delivered = await w.store.claim("bob");
    expect(delivered?.id).toBe(w.m.id);
    expect(await w.store.claim("bob")).toBeNull();
  });

  test("a send that gave up waiting for the lock leaves at most an orphan marker: the same message is sent later", async () => {
    const stateDir = tempDir("agent-early-marker-");
    const store = new FileMailboxStore({ stateDir, lock: { waitMs: 100 } });
    await store.prepare("bob");
    const other = openOsLock(join(stateDir, "mailboxes.lock.flock"))!;
    expect(other.tryTake()).toBe(true);
    const m = message("the task");
    const refused = await store.send(m).catch((error: Error) => error);
    expect(String((refused as Error).message)).toContain("holds it");
    expect(existsSync(join(stateDir, "mailboxes/bob/ready", fileNameOf(m.id)))).toBe(false);
    other.give();
    await store.send(m);
    expect(await store.claim("bob")).toEqual(m);
  });
});
