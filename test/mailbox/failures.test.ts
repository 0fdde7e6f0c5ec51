import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { MailboxStorageError } from "../../src/core/errors.ts";
import { writeFileAtomic } from "../../src/storage/atomic-file.ts";
import { type FsOps, realFs } from "../../src/storage/fs-ops.ts";
import { tempDir } from "../support/temp-dir.ts";
import { fixture } from "./helpers.ts";

type Call = Exclude<keyof FsOps, "renameNoReplaceSync" | "linkAtSync">;

// The stores' file calls as they run (renames through renameat2 where there is one),
// and node:fs alone (a store looks, then renames): both must keep every guarantee.
const BASES = { "renameat2(RENAME_NOREPLACE)": realFs, "a look, then rename": fs as FsOps } as const;

/**
 * The real file system with one kind of call failing (EIO) while `when` holds;
 * a failing "renameSync" fails every rename, renameat2 included.
 */
function failing(call: Call, when: (...args: unknown[]) => boolean = () => true, base: FsOps = realFs): FsOps & { armed: boolean } {
  const ops = { ...base, armed: true } as FsOps & { armed: boolean };
  // The call and its twin through directory descriptors, which a store with the real calls makes instead.
  const twin = ({ renameSync: "renameNoReplaceSync", linkSync: "linkAtSync" } as Partial<Record<Call, keyof FsOps>>)[call];
  const calls: (keyof FsOps)[] = twin && base[twin] ? [call, twin] : [call];
  for (const name of calls) {
    const real = base[name] as (...args: unknown[]) => unknown;
    (ops as Record<string, unknown>)[name] = (...args: unknown[]) => {
      if (ops.armed && when(...args)) throw Object.assign(new Error(`EIO: injected ${name} failure`), { code: "EIO" });
      return real(...args);
    };
  }
  return ops;
}

const isDirFd = (fd: unknown) => {
  try {
    return fs.fstatSync(fd as number).isDirectory();
  } catch {
    return false;
  }
};

describe("a failed send leaves nothing behind", () => {
  for (const [label, call, when] of [
    ["the message file's fsync", "fsyncSync", (fd: unknown) => !isDirFd(fd)],
    ["the link into ready/", "linkSync", () => true],
    ["the ready/ directory fsync", "fsyncSync", (fd: unknown) => isDirFd(fd)],
  ] as const) {
    test(`when ${label} fails`, async () => {
      const f = fixture();
      await f.store.send(f.message("alice", "before")); // creates the directories
      const broken = f.newStore({ fs: failing(call, when) });
      const m = f.message("alice", "after");
      const error = await broken.send(m).catch((e) => e);
      expect(error).toBeInstanceOf(MailboxStorageError);
      expect(error.message).toContain("injected");
      expect(f.files("alice", "ready")).toHaveLength(1);
      expect(readdirSync(join(f.stateDir, "mailboxes/.ids"))).toHaveLength(1);
      expect(readdirSync(join(f.stateDir, "mailboxes/alice")).filter((n) => n.includes("tmp"))).toEqual([]);
      // The id is not burnt: the same message can be sent again once the disk is healthy.
      await f.store.send(m);
      expect(f.files("alice", "ready")).toContain(`${m.id}.json`);
    });
  }
});

for (const [baseName, base] of Object.entries(BASES)) describe(`a failed transition leaves the source in place (${baseName})`, () => {
  test("claim with a failing rename: the message stays ready and is claimed later", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    const ops = failing("renameSync", () => true, base);
    const broken = f.newStore({ fs: ops });
    await expect(broken.claim("alice")).rejects.toBeInstanceOf(MailboxStorageError);
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
    expect(f.files("alice", "processing")).toEqual([]);
    ops.armed = false;
    expect(await broken.claim("alice")).toEqual(m);
  });

  test("claim with a failing directory fsync: the move is undone", async () => {
    const f = fixture();
    const m = f.message("alice");
    await f.store.send(m);
    const broken = f.newStore({ fs: failing("fsyncSync", isDirFd, base) });
    await expect(broken.claim("alice")).rejects.toBeInstanceOf(MailboxStorageError);
    expect(f.files("alice", "ready")).toEqual([`${m.id}.json`]);
    expect(f.files("alice", "processing")).toEqual([]);
  });

  for (const call of ["renameSync", "fsyncSync"] as const) {
    test(`ack, release and quarantine with a failing ${call}: the message stays in processing`, async () => {
      const f = fixture();
      const m = f.message("alice");
      await f.store.send(m);
      const claimed = (await f.store.claim("alice"))!;
      const broken = f.newStore({ fs: failing(call, call === "fsyncSync" ? isDirFd : () => true, base) });
      await expect(broken.ack(claimed)).rejects.toBeInstanceOf(MailboxStorageError);
      await expect(broken.release(claimed)).rejects.toBeInstanceOf(MailboxStorageError);
      await expect(broken.quarantine(claimed, "x")).rejects.toBeInstanceOf(MailboxStorageError);
      expect(f.files("alice", "processing")).toEqual([`${m.id}.json`]);
      expect(f.files("alice", "ready")).toEqual([]);
      expect(f.files("alice", "done")).toEqual([]);
      await f.store.ack(claimed);
      expect(f.files("alice", "done")).toEqual([`${m.id}.json`]);
    });
  }
});

describe("writeFileAtomic", () => {
  test("a failing rename leaves the old file and no temp file", () => {
    const dir = tempDir();
    const target = join(dir, "team.json");
    writeFileAtomic(target, "old");
    expect(() => writeFileAtomic(target, "new", failing("renameSync"))).toThrow("injected");
    expect(readdirSync(dir)).toEqual(["team.json"]);
    expect(fs.readFileSync(target, "utf8")).toBe("old");
  });

  test("a failing fsync leaves the old file and no temp file", () => {
    const dir = tempDir();
    const target = join(dir, "team.json");
    writeFileAtomic(target, "old");
    expect(() => writeFileAtomic(target, "new", failing("fsyncSync", (fd) => !isDirFd(fd)))).toThrow("injected");
    expect(readdirSync(dir)).toEqual(["team.json"]);
    expect(fs.readFileSync(target, "utf8")).toBe("old");
  });
});
