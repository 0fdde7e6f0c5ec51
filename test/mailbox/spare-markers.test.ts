// Spare markers: empty files in mailboxes/.ids/ made ahead (reserve), each the
// inode a later send writes its message into and renames to its marker without
// replacing anything. Every send still delivers its id once, whatever happened to
// the spare or the marker; none is leaked; prune removes a dead process's.
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuplicateMessageIdError } from "../../src/core/errors.ts";
import { serializeMessage } from "../../src/core/message-format.ts";
import { fileNameOf } from "../../src/mailbox/paths.ts";
import { realFs } from "../../src/storage/fs-ops.ts";
import { fixture } from "./helpers.ts";

const idsDir = (stateDir: string) => join(stateDir, "mailboxes/.ids");
const spares = (stateDir: string) => readdirSync(idsDir(stateDir)).filter((name) => name.startsWith(".spare.")).sort();

async function reserved(f: ReturnType<typeof fixture>, count: number): Promise<string[]> {
  // Settles once each spare is made and handed to sends (waiting for the files alone left a send before the hand-over).
  await f.store.reserve(count);
  return spares(f.stateDir);
}

describe("spare markers", () => {
  test("two reserved, two sends: each marker is a spare's inode, whole, linked in ready/; none left", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    const made = await reserved(f, 2);
    const inodes = new Set(made.map((name) => statSync(join(idsDir(f.stateDir), name)).ino));
    const [first, second] = [f.message("bob", "one"), f.message("bob", "two")];
    await f.store.send(first);
    await f.store.send(second);
    expect(spares(f.stateDir)).toEqual([]);
    for (const m of [first, second]) {
      const marker = lstatSync(join(idsDir(f.stateDir), m.id));
      expect(inodes.has(marker.ino)).toBe(true);
      expect(marker.nlink).toBe(2);
      expect(marker.mode & 0o777).toBe(0o600);
    }
    expect(f.files("bob", "ready")).toEqual([fileNameOf(first.id), fileNameOf(second.id)].sort());
    expect(await f.store.claim("bob")).toEqual(first);
    expect(await f.store.claim("bob")).toEqual(second);
    // A third send has no spare: its marker is created, as without any.
    const third = f.message("bob", "three");
    await f.store.send(third);
    expect(lstatSync(join(idsDir(f.stateDir), third.id)).nlink).toBe(2);
    expect(await f.store.claim("bob")).toEqual(third);
  });

  test("a spare removed meanwhile (a prune, by hand): the send creates its marker and delivers", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    for (const name of await reserved(f, 1)) unlinkSync(join(idsDir(f.stateDir), name));
    const m = f.message("bob");
    await f.store.send(m);
    expect(await f.store.claim("bob")).toEqual(m);
    expect(spares(f.stateDir)).toEqual([]);
  });

  test("a duplicate id through a spare is refused; the first message is intact and the spare is not left behind", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    const m = f.message("bob", "the original");
    await f.store.send(m);
    await reserved(f, 1);
    await expect(f.store.send({ ...m, content: "an impostor" })).rejects.toBeInstanceOf(DuplicateMessageIdError);
    expect(spares(f.stateDir)).toEqual([]);
    expect(await f.store.claim("bob")).toEqual(m);
    expect(readdirSync(idsDir(f.stateDir))).toEqual([m.id]);
  });

  test("an orphan marker of the id (a send killed before its link): the send through a spare replaces it and delivers once", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    const m = f.message("bob");
    writeFileSync(join(idsDir(f.stateDir), m.id), "a send that died");
    await reserved(f, 1);
    await f.store.send(m);
    expect(spares(f.stateDir)).toEqual([]);
    expect(lstatSync(join(idsDir(f.stateDir), m.id)).nlink).toBe(2);
    expect(await f.store.claim("bob")).toEqual(m);
    expect(f.files("bob", "ready")).toEqual([]);
  });

  test("a dead process's spares are removed by prune once older than its cut-off; a fresh one is kept", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    const old = join(idsDir(f.stateDir), ".spare.999999.1");
    writeFileSync(old, "");
    utimesSync(old, new Date("2020-01-01T00:00:00Z"), new Date("2020-01-01T00:00:00Z"));
    const [fresh] = await reserved(f, 1);
    const result = await f.store.prune(new Date("2026-01-01T00:00:00Z"));
    expect(result.orphanMarkers).toBe(1);
    expect(existsSync(old)).toBe(false);
    expect(spares(f.stateDir)).toEqual([fresh!]);
    // The fresh one still serves a send.
    const m = f.message("bob");
    await f.store.send(m);
    expect(spares(f.stateDir)).toEqual([]);
    expect(await f.store.claim("bob")).toEqual(m);
  });

  test("without a rename that never replaces (a store given other calls), none is made and sends create their markers", async () => {
    const { renameNoReplaceSync: _, ...withoutIt } = realFs;
    const f = fixture({ fs: withoutIt });
    await f.store.prepare("bob");
    // Settles once the spares it started are made (or not): none was.
    await f.store.reserve(4);
    expect(spares(f.stateDir)).toEqual([]);
    const m = f.message("bob");
    await f.store.send(m);
    expect(await f.store.claim("bob")).toEqual(m);
    expect(readdirSync(idsDir(f.stateDir))).toEqual([m.id]);
  });

  test("where the rename cannot be done (it says so, as off Linux): that send creates its marker, and no more spares are made", async () => {
    const f = fixture({ fs: { ...realFs, renameNoReplaceSync: () => false } });
    await f.store.prepare("bob");
    await reserved(f, 2);
    const m = f.message("bob");
    await f.store.send(m);
    expect(await f.store.claim("bob")).toEqual(m);
    // The spare it took is gone; the other stays until pruned, and none is made after.
    expect(spares(f.stateDir)).toHaveLength(1);
    await f.store.reserve(4);
    expect(spares(f.stateDir)).toHaveLength(1);
    expect(lstatSync(join(idsDir(f.stateDir), m.id)).nlink).toBe(2);
  });

  test("a teammate's message and its content are the same through a spare as through a create", async () => {
    const f = fixture();
    await f.store.prepare("bob");
    await reserved(f, 1);
    const m = f.message("bob", "ü".repeat(5_000));
    await f.store.send(m);
    expect(Bun.file(join(f.stateDir, "mailboxes/bob/ready", fileNameOf(m.id))).size).toBe(Buffer.byteLength(serializeMessage(m)));
    expect(await f.store.claim("bob")).toEqual(m);
  });
});
