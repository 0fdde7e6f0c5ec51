import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { CorruptStateFileError } from "../core/errors.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { HistoryRecord } from "../runtime/history-store.ts";
import type { HistoryReader } from "../timeline/session-timeline.ts";
import { FileHistoryBackend } from "../runtime/file-history.ts";

/** What one look at a history found since the last. */
export interface TailRead {
  records: HistoryRecord[];
  /** The history was replaced (a new teammate of the same name): `records` start from its beginning. */
  replaced: boolean;
  /** There is no history now (not written yet, or moved aside). */
  missing: boolean;
}

/** An agent's history read a piece at a time, as it grows; never written, never locked. */
export interface HistoryTail {
  read(): Promise<TailRead>;
}

/**
 * `agents/<name>.jsonl` followed by byte offset. Only whole lines are taken: a
 * record still being appended (no newline yet) waits for the next look. A file
 * with another inode, or shorter than what was read, is a new history (the old
 * one archived, a new teammate of that name begun) and is read from its start.
 */
export class FileHistoryTail implements HistoryTail {
  #offset = 0;
  #line = 0;
  #ino: bigint | undefined;

  constructor(readonly path: string) {}

  async read(): Promise<TailRead> {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch (error) {
      if (isErrno(error, "ENOENT")) return { records: [], replaced: false, missing: true };
      throw error;
    }
    try {
      const stat = fstatSync(fd, { bigint: true });
      const replaced = this.#ino !== undefined && (stat.ino !== this.#ino || stat.size < BigInt(this.#offset));
      if (replaced) [this.#offset, this.#line] = [0, 0];
      this.#ino = stat.ino;
      const size = Number(stat.size);
      if (size <= this.#offset) return { records: [], replaced, missing: false };
      const bytes = Buffer.alloc(size - this.#offset);
      let got = 0;
      while (got < bytes.length) {
        const n = readSync(fd, bytes, got, bytes.length - got, this.#offset + got);
        if (n === 0) break;
        got += n;
      }
      const end = bytes.subarray(0, got).lastIndexOf(0x0a);
      if (end < 0) return { records: [], replaced, missing: false };
      this.#offset += end + 1;
      return { records: this.#parse(bytes.subarray(0, end).toString("utf8").split("\n")), replaced, missing: false };
    } finally {
      closeSync(fd);
    }
  }

  #parse(lines: string[]): HistoryRecord[] {
    return lines.map((line) => {
      this.#line += 1;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new CorruptStateFileError(`${this.path}:${this.#line}`, "not valid JSON");
      }
      const parsed = HistoryRecord.safeParse(json);
      if (!parsed.success) throw new CorruptStateFileError(`${this.path}:${this.#line}`, parsed.error.issues[0]?.message ?? "not a valid history record");
      return parsed.data;
    });
  }
}

/**
 * A history in a store that reads it whole (PostgreSQL rows): each look reads
 * it and keeps what is past the records seen. A history that got shorter or
 * begins with another record is a new one, taken from its start.
 */
export class StoreHistoryTail implements HistoryTail {
  #seen = 0;
  #first: string | undefined;

  constructor(
    readonly reader: Pick<HistoryReader, "read">,
    readonly agent: string,
  ) {}

  async read(): Promise<TailRead> {
    const records = await this.reader.read(this.agent);
    if (records.length === 0) return { records: [], replaced: false, missing: true };
    const first = JSON.stringify(records[0]);
    const replaced = this.#first !== undefined && (first !== this.#first || records.length < this.#seen);
    if (replaced) this.#seen = 0;
    this.#first = first;
    const fresh = records.slice(this.#seen);
    this.#seen = records.length;
    return { records: fresh, replaced, missing: false };
  }
}

/** The tail that suits `backend`: by byte offset over its file, else by record count over its reads. */
export function historyTailOf(backend: Pick<HistoryReader, "read">, agent: string): HistoryTail {
  return backend instanceof FileHistoryBackend ? new FileHistoryTail(backend.pathOf(agent)) : new StoreHistoryTail(backend, agent);
}
