import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { contentHash } from "../../src/file-journal/file-ledger.ts";
import type { JournalEntry } from "../../src/file-journal/journal-records.ts";
import { backendRows } from "../support/store-backends.ts";

// The file journal's two backends (the session dir's files/, PostgreSQL rows)
// keep the same things: each agent's versions, the journal in order, and the
// contents once each — seen by another process's opening of the same session.

const entry = (path: string, agent: string, before: string | null, after: string | null): JournalEntry => ({
  v: 1,
  at: "2026-01-01T00:00:00.000Z",
  path,
  agent,
  kind: "tool",
  tool: "write_file",
  turn: "t1",
  before: before === null ? null : { hash: contentHash(Buffer.from(before)), size: before.length, stored: true },
  after: after === null ? null : { hash: contentHash(Buffer.from(after)), size: after.length, stored: true },
});

describe.each(backendRows())("file journal (%s store)", (_name, backend) => {
  test("versions per agent, the journal in order, the newest entry of a path, and contents by hash: as another process reads them", async () => {
    const session = await backend.session();
    const files = session.open().files;
    const version = { size: 3, mtimeMs: 1.5, hash: contentHash(Buffer.from("abc")) };
    await files.remember("alice", "a.txt", version);
    await files.remember("alice", "a.txt", { ...version, mtimeMs: 2 });
    await files.remember("bob", "b.txt", version);
    expect(await files.append(entry("a.txt", "alice", null, "abc"))).toBe(1);
    expect(await files.append(entry("b.txt", "bob", "x", "y"))).toBe(2);
    expect(await files.append(entry("a.txt", "bob", "abc", "abcd"))).toBe(3);
    const bytes = Buffer.from([0, 1, 2, 255]);
    await files.putBlob(contentHash(bytes), bytes, "now");
    await files.putBlob(contentHash(bytes), bytes, "none");

    const other = session.open().files;
    expect(await other.versions("alice")).toEqual(new Map([["a.txt", { ...version, mtimeMs: 2 }]]));
    expect(await other.versions("carol")).toEqual(new Map());
    expect((await other.entries()).map((e) => [e.seq, e.path, e.agent])).toEqual([
      [1, "a.txt", "alice"],
      [2, "b.txt", "bob"],
      [3, "a.txt", "bob"],
    ]);
    expect(await other.lastFor("a.txt")).toEqual({ ...entry("a.txt", "bob", "abc", "abcd"), seq: 3 });
    expect(await other.lastFor("c.txt")).toBeUndefined();
    expect(await other.blob(contentHash(bytes))).toEqual(bytes);
    expect(await other.hasBlob(contentHash(bytes), 4)).toBe(true);
    expect(await other.hasBlob(contentHash(bytes), 5)).toBe(false);
    expect(await other.blob(contentHash(Buffer.from("never stored")))).toBeUndefined();
    expect(await other.blob("")).toBeUndefined();
  });

  test("an agent expected (about to work): its first remember needs nothing more made; its versions read as none until then", async () => {
    const session = await backend.session();
    const files = session.open().files;
    files.expect?.("dave");
    if (backend.name === "file") {
      // Its version file is made ahead, empty (in the background: waited for here).
      const made = join(session.place, "files", "versions", "dave.jsonl");
      for (let i = 0; i < 200 && !existsSync(made); i++) await Bun.sleep(10);
      expect(readFileSync(made, "utf8")).toBe("");
    }
    const version = { size: 3, mtimeMs: 1.5, hash: contentHash(Buffer.from("abc")) };
    expect(await session.open().files.versions("dave")).toEqual(new Map());
    await files.remember("dave", "d.txt", version);
    expect(await session.open().files.versions("dave")).toEqual(new Map([["d.txt", version]]));
  });

  test("a content put \"soon\" (a change's content after) counts as stored at once, reads back, and a \"now\" of it after waits for it, stored once", async () => {
    const session = await backend.session();
    const files = session.open().files;
    const bytes = Buffer.from("the content after\n");
    const hash = contentHash(bytes);
    await files.putBlob(hash, bytes, "soon");
    expect(await files.hasBlob(hash, bytes.length)).toBe(true);
    expect(await files.blob(hash)).toEqual(bytes);
    // The next change's content before: made durable, the background's work awaited rather than done twice (or waited on forever).
    await files.putBlob(hash, bytes, "now");
    expect(await session.open().files.blob(hash)).toEqual(bytes);
  });
});
