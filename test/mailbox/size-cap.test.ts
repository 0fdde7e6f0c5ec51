import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MessageTooLargeError } from "../../src/core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES, serializeMessage } from "../../src/core/message.ts";
import type { FsOps } from "../../src/storage/fs-ops.ts";
import { fixture } from "./helpers.ts";

/** The real fs, recording every path whose content is read (whole, or through an open file). */
function recordingReads() {
  const read: string[] = [];
  const opened = new Map<number, string>();
  const ops: FsOps = {
    ...fs,
    readFileSync: ((path: fs.PathOrFileDescriptor, options?: unknown) => {
      read.push(String(path));
      return fs.readFileSync(path, options as never);
    }) as typeof fs.readFileSync,
    openSync: ((path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      const fd = fs.openSync(path, flags ?? "r", mode);
      opened.set(fd, String(path));
      return fd;
    }) as typeof fs.openSync,
    readSync: ((fd: number, ...rest: unknown[]) => {
      read.push(opened.get(fd) ?? `fd ${fd}`);
      return (fs.readSync as (...args: unknown[]) => number)(fd, ...rest);
    }) as typeof fs.readSync,
  };
  return { ops, read };
}

describe("the message size cap", () => {
  test("a send over the default cap of 1 MiB is refused with an error naming the cap; nothing is written", async () => {
    const f = fixture();
    const big = f.message("alice", "x".repeat(DEFAULT_MAX_CONTENT_BYTES + 1));
    const error = await f.store.send(big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect((error as Error).message).toContain(`over the mailbox cap of ${DEFAULT_MAX_CONTENT_BYTES} bytes (config mailbox.maxContentBytes)`);
    expect(f.files("alice", "ready")).toEqual([]);
    expect(existsSync(join(f.stateDir, "mailboxes", ".ids", big.id))).toBe(false);
    // Exactly at the cap is fine; the cap counts UTF-8 bytes, not characters.
    await f.store.send(f.message("alice", "x".repeat(DEFAULT_MAX_CONTENT_BYTES)));
    const small = fixture({ maxContentBytes: 10 });
    await small.store.send(small.message("alice", "é".repeat(5)));
    await expect(small.store.send(small.message("alice", "é".repeat(6)))).rejects.toThrow(MessageTooLargeError);
  });

  test("at claim, a file too large for the cap is quarantined without being read; the next message is delivered", async () => {
    const { ops, read } = recordingReads();
    const f = fixture({ maxContentBytes: 1000, fs: ops });
    const huge = f.message("alice", "y");
    const good = f.message("alice", "fine");
    await f.store.send(good);
    // Dropped in by another writer with no cap: 100 KB of content, far over 1000 bytes.
    const hugePath = join(f.stateDir, "mailboxes", "alice", "ready", `${huge.id}.json`);
    writeFileSync(hugePath, serializeMessage({ ...huge, content: "y".repeat(100_000) }));

    const claimed = await f.newStore({ maxContentBytes: 1000, fs: ops }).claim("alice");
    expect(claimed?.id).toBe(good.id);
    expect(read).toContain(join(f.stateDir, "mailboxes", "alice", "ready", `${good.id}.json`));
    expect(read).not.toContain(hugePath);
    const quarantined = readdirSync(join(f.stateDir, "mailboxes", "alice", "quarantine"));
    const reason = quarantined.find((name) => name.endsWith(".reason.json"))!;
    expect(fs.readFileSync(join(f.stateDir, "mailboxes", "alice", "quarantine", reason), "utf8")).toContain(
      "too large for a message under the cap of 1000 content bytes",
    );
  });

  test("a file small enough to read but whose content is over the cap is quarantined too", async () => {
    const f = fixture({ maxContentBytes: 1000 });
    const over = f.message("alice", "z");
    const ready = join(f.stateDir, "mailboxes", "alice", "ready");
    mkdirSync(ready, { recursive: true });
    writeFileSync(join(ready, `${over.id}.json`), serializeMessage({ ...over, content: "z".repeat(1001) }));
    expect(await f.store.claim("alice")).toBeNull();
    expect(f.files("alice", "quarantine").some((name) => name.startsWith(over.id))).toBe(true);
  });
});
