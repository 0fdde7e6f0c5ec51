import { appendFileSync, closeSync, openSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../core/errors.ts";
import { ensureDir, ensureDirWhereCheap, FILE_MODE, openWhereCheap, fsyncDirOffLoop, fsyncOffLoop, isErrno } from "../storage/atomic-file.ts";
import { type BlobSync, type FileJournalBackend, type FileVersion, JournalEntry, type NumberedEntry, VersionRecord } from "./journal-records.ts";

/**
 * The file backend of a session's file journal, under `<state-dir>/files/`:
 * `journal.jsonl` (one entry a line, appended and fsynced), `versions/<agent>.jsonl`
 * (what each agent saw of each file, the last line of a path wins) and
 * `blobs/<sha256>` (the contents the journal names, each stored once).
 */
export class FileJournalFiles implements FileJournalBackend {
  readonly #dir: string;
  readonly #cache = new Map<string, Map<string, FileVersion>>();
  /** Entries in the journal file, counted on the first append (one process appends at a time: the session's runtime lock). */
  #count: number | undefined;
  /** Contents this process stored durably, or synced: a change whose content before is one of them needs no sync. */
  readonly #synced = new Set<string>();
  /** Agents' version files this process made or found (made on the thread pool, see openWhereCheap). */
  readonly #made = new Set<string>();
  /** Version files being made (see #makeVersionFile). */
  readonly #making = new Map<string, Promise<void>>();
  /** Contents being synced in the background ("soon"), until done. */
  readonly #syncing = new Map<string, Promise<void>>();
  #temps = 0;

  constructor(stateDir: string) {
    this.#dir = join(stateDir, "files");
  }

  #versionsPath(agent: string): string {
    return join(this.#dir, "versions", `${encodeURIComponent(agent)}.jsonl`);
  }

  async versions(agent: string): Promise<Map<string, FileVersion>> {
    const cached = this.#cache.get(agent);
    if (cached) return new Map(cached);
    const map = new Map<string, FileVersion>();
    // A version lost to a crash only makes the agent read the file again, so these lines are not fsynced;
    // a torn last line is skipped for the same reason.
    for (const line of readLines(this.#versionsPath(agent))) {
      const parsed = VersionRecord.safeParse(safeJson(line));
      if (parsed.success) map.set(parsed.data.path, parsed.data.version);
    }
    this.#cache.set(agent, map);
    return new Map(map);
  }

  async remember(agent: string, path: string, version: FileVersion): Promise<void> {
    const file = this.#versionsPath(agent);
    await this.#makeVersionFile(file);
    appendFileSync(file, `${JSON.stringify({ path, version })}\n`, { mode: FILE_MODE });
    this.#cache.get(agent)?.set(path, version);
  }

  /** Makes `agent`'s version file now, in the background: its first read then appends to a file that is there. */
  expect(agent: string): void {
    void this.#makeVersionFile(this.#versionsPath(agent)).catch(() => {
      // The first remember makes it again, and reports a failure.
    });
  }

  /** Makes `file` (empty) unless this process made or found it; one making at a time, which every caller waits for. */
  #makeVersionFile(file: string): Promise<void> {
    if (this.#made.has(file)) return Promise.resolve();
    let making = this.#making.get(file);
    if (!making) {
      making = (async () => {
        await ensureDirWhereCheap(join(this.#dir, "versions"));
        closeSync(await openWhereCheap(file, "a", FILE_MODE));
        this.#made.add(file);
      })().finally(() => this.#making.delete(file));
      this.#making.set(file, making);
    }
    return making;
  }

  async hasBlob(hash: string, size: number): Promise<boolean> {
    if (!HASH.test(hash)) return false;
    if (this.#syncing.has(hash)) return true;
    // The size is checked too: a blob written without fsync may be cut short by a crash.
    return statSync(join(this.#dir, "blobs", hash), { throwIfNoEntry: false })?.size === size;
  }

  async putBlob(hash: string, bytes: Uint8Array, sync: BlobSync): Promise<void> {
    if (this.#synced.has(hash)) return;
    const pending = this.#syncing.get(hash);
    if (sync === "soon") {
      if (pending) return;
      // Begun once the caller's turn of the event loop is over, so the syncs its write waits for are queued
      // first; until it is done, this process counts the content as stored and a read of it waits.
      const done = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.#store(hash, bytes, true))
        .finally(() => this.#syncing.delete(hash));
      // Awaited only by a later "now" of the same content, which stores it itself if this failed.
      done.catch(() => {});
      this.#syncing.set(hash, done);
      return;
    }
    if (sync === "now" && pending && (await pending.then(() => true, () => false))) return;
    await this.#store(hash, bytes, sync === "now");
  }

  async #store(hash: string, bytes: Uint8Array, durable: boolean): Promise<void> {
    const blobs = join(this.#dir, "blobs");
    ensureDir(blobs);
    const target = join(blobs, hash);
    if (statSync(target, { throwIfNoEntry: false })?.size === bytes.length) {
      // Kept earlier, maybe unsynced (a read's content, a change's content after): the file and its name synced together.
      if (durable) await Promise.all([syncFileOffLoop(target), fsyncDirOffLoop(blobs)]);
    } else {
      // Content-addressed: a concurrent writer of the same name writes the same bytes.
      this.#temps += 1;
      const temp = `${target}.${process.pid}-${this.#temps}.tmp`;
      const fd = openSync(temp, "w", FILE_MODE);
      try {
        writeSync(fd, bytes);
        if (durable) await fsyncOffLoop(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, target);
      if (durable) await fsyncDirOffLoop(blobs);
    }
    if (durable) this.#synced.add(hash);
  }

  async blob(hash: string): Promise<Buffer | undefined> {
    // Only a sha256 names a blob: an empty (unknown) hash or anything else is no file name here.
    if (!HASH.test(hash)) return undefined;
    await this.#syncing.get(hash)?.catch(() => {});
    try {
      return readFileSync(join(this.#dir, "blobs", hash));
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  async append(entry: JournalEntry): Promise<number> {
    ensureDir(this.#dir);
    const path = join(this.#dir, "journal.jsonl");
    this.#count ??= readLines(path).length;
    const created = this.#count === 0;
    const fd = openSync(path, "a", FILE_MODE);
    try {
      writeSync(fd, `${JSON.stringify(JournalEntry.parse(entry))}\n`);
      // Counted as it is written: appends started together (parallel tool calls) keep their order.
      this.#count += 1;
      const seq = this.#count;
      // A new journal's name is synced with its first line.
      await Promise.all([fsyncOffLoop(fd), created ? fsyncDirOffLoop(this.#dir) : undefined]);
      return seq;
    } finally {
      closeSync(fd);
    }
  }

  async entries(): Promise<NumberedEntry[]> {
    const path = join(this.#dir, "journal.jsonl");
    const lines = readLines(path);
    return lines.flatMap((line, index) => {
      const parsed = JournalEntry.safeParse(safeJson(line));
      if (parsed.success) return [{ ...parsed.data, seq: index + 1 }];
      // Only the last line may be torn (a crash mid-append); anything else is damage to report.
      if (index === lines.length - 1) return [];
      throw new CorruptStateFileError(path, `line ${index + 1} is not a journal entry`);
    });
  }

  async lastFor(path: string): Promise<NumberedEntry | undefined> {
    return (await this.entries()).findLast((entry) => entry.path === path);
  }
}

const HASH = /^[0-9a-f]{64}$/;

/** Makes the file at `path` durable, off the event loop. */
async function syncFileOffLoop(path: string): Promise<void> {
  const fd = openSync(path, "r");
  try {
    await fsyncOffLoop(fd);
  } finally {
    closeSync(fd);
  }
}

function readLines(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
  return text.split("\n").filter((line) => line !== "");
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
