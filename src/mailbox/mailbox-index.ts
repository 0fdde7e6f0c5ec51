import type { BigIntStats, Stats } from "node:fs";
import type { MailboxMessage } from "../core/message.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";

/**
 * `mailboxes/<agent>/index`: what a fresh process needs to know about each message
 * sent to one agent without opening its file — its FIFO key for the first claim,
 * its sender, kind and time for `mailbox list` — and the file's identity when the
 * record was made, to tell whether the file is still the one described.
 *
 * It is a cache: the files stay the truth. A message's state is the directory its
 * file is in (the index never says where a message is, so a transition writes
 * nothing here), a record whose file is gone is never listed or claimed, a file
 * without a record (sent by an older version, dropped in by hand, its record lost
 * in a crash) is read as before and a record is added for it, a claimed head is
 * read and checked in full as it always was, and `list` uses a record only while
 * the file's inode, size and mtime are still what they were.
 *
 * Records are appended under the mailbox lock while the send they describe is
 * made durable (a record whose file a failed fsync took back, like one whose
 * file was since claimed, names nothing in the listing and is never used), and
 * never fsynced (a lost one only costs a read). Each is one line
 * *led* by a newline, so a record torn by a crash never joins the next one:
 *
 *     "\n" crc32(body) as 8 hex digits, then the body:
 *     <id>.json "\t" createdAtUtc "\t" sender "\t" kind "\t" size "\t" inode "\t" mtime in ns
 *
 * (the file's name, not the bare id, so a first claim matches records to the names
 * it listed without building a string for either). *
 * All of it ASCII (canonical UUID, ISO instant, agent slug, kind, decimals). A
 * record whose checksum or shape is wrong is skipped; the file is rewritten
 * without it the next time the index is read under the lock.
 */
export interface LoadedIndex {
  /** File name (`<id>.json`) → the last good record body for it. */
  readonly records: Map<string, string>;
  /** Lines that were not good records: a torn tail, damage. */
  readonly bad: number;
}

const NAME_END = 41;
const TIME_START = 42;
const TIME_END = 66;

export function recordBody(message: Pick<MailboxMessage, "id" | "createdAtUtc" | "sender" | "kind">, file: BigIntStats): string {
  return `${message.id}.json\t${message.createdAtUtc}\t${message.sender}\t${message.kind}\t${file.size}\t${file.ino}\t${file.mtimeNs}`;
}

/** The file name (`<id>.json`) a good record body describes. */
export function recordName(body: string): string {
  return body.slice(0, NAME_END);
}

/** The `createdAtUtc` a good record body holds. */
export function recordTime(body: string): string {
  return body.slice(TIME_START, TIME_END);
}

/** What `mailbox list` shows of a message, from its record. */
export interface RecordFields {
  readonly createdAtUtc: string;
  readonly sender: string;
  readonly kind: string;
}

/**
 * The listed fields of a good record body, if it still describes the file `stats`
 * is of — the same inode and size, and an mtime within a microsecond of the one
 * recorded: agent never writes a message file after creating it (its moves are
 * renames, which keep all three), a write by anything else changes the mtime, a
 * replacement the inode. Else undefined, and the file is read.
 *
 * `stats` are plain (number) ones, as a listing takes them: their mtimeMs is a
 * double, good to about a microsecond, and converting the stats of 50 000 files
 * to strings, or parsing the records' numbers as bigints, cost more than the
 * listing's every lstat.
 */
export function fieldsIfSameFile(body: string, stats: Stats): RecordFields | undefined {
  // The three are the record's last fields, and no field holds a tab.
  const mtimeAt = body.lastIndexOf("\t");
  const inoAt = body.lastIndexOf("\t", mtimeAt - 1);
  const sizeAt = body.lastIndexOf("\t", inoAt - 1);
  if (Number(body.slice(sizeAt + 1, inoAt)) !== stats.size || Number(body.slice(inoAt + 1, mtimeAt)) !== stats.ino) return undefined;
  if (!(Math.abs(Number(body.slice(mtimeAt + 1)) / 1e6 - stats.mtimeMs) < MTIME_SLACK_MS)) return undefined;
  const senderEnd = body.indexOf("\t", TIME_END + 1);
  const kindEnd = body.indexOf("\t", senderEnd + 1);
  return { createdAtUtc: body.slice(TIME_START, TIME_END), sender: body.slice(TIME_END + 1, senderEnd), kind: body.slice(senderEnd + 1, kindEnd) };
}

/** How far a double's mtimeMs may be from the recorded nanoseconds (rounding only: both are of one timestamp). */
const MTIME_SLACK_MS = 0.002;

/** The text of the index at `path`: "" when it is missing, undefined when it cannot be read (then it counts as damaged). */
export function readIndexText(fs: FsOps, path: string): string | undefined {
  try {
    return fs.readFileSync(path, "latin1");
  } catch (error) {
    return isErrno(error, "ENOENT") ? "" : undefined;
  }
}

/**
 * Calls `visit` with each good record body of an index's text, in the order they
 * were appended, and returns how many lines were not good records.
 */
export function scanRecords(text: string, visit: (body: string) => void): number {
  let bad = 0;
  let start = text.indexOf("\n");
  if (start !== 0 && text.length > 0) bad += 1;
  while (start !== -1) {
    const next = text.indexOf("\n", start + 1);
    const end = next === -1 ? text.length : next;
    if (goodLine(text, start, end)) visit(text.slice(start + 9, end));
    else bad += 1;
    start = next;
  }
  return bad;
}

/** What a first claim learns from the index about the ready/ names it listed. */
export interface RecordMatch {
  /** Positions in `names` of those with a good record, in the order the records were appended (a name's first good record counts). */
  readonly matched: Int32Array;
  /** The time each of those records gives, TIME_WIDTH characters each, in the same order. */
  readonly times: string;
  /** Whether `matched` is in FIFO order `(createdAtUtc, id)` already, as it nearly always is. */
  readonly inOrder: boolean;
  /** The names it had no good record of, in the order given: their files are read. */
  readonly unmatched: string[];
  /** Records of listed names that were damaged (their files are read, and the index is written again). */
  readonly bad: number;
}

/** The width of a record's `createdAtUtc` (ISO instant, milliseconds, Z). */
export const TIME_WIDTH = TIME_END - TIME_START;

/**
 * For a first claim: the records of `names` (ready/ entries), each line of the
 * index checked only when it names one of them, so a damaged record of anything
 * else is never used. Undefined when the index exists but cannot be read.
 *
 * Where a claim's time goes here is memory: a first touch of a fresh page costs
 * ~11 µs on these VMs, the price of some 2 KB of work. So the index is read in
 * chunks into one small buffer, names are matched to records as bytes in a
 * table of numbers, and nothing is allocated per record: a 6 MB read, a set of
 * names and a string cut from every line cost 3–5 000 page faults at 50 000
 * records, more than the listing itself.
 */
export function matchRecords(fs: FsOps, path: string, names: readonly string[], chunkBytes = MATCH_CHUNK_BYTES): RecordMatch | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, "r");
  } catch (error) {
    if (!isErrno(error, "ENOENT")) return undefined;
    return { matched: new Int32Array(0), times: "", inOrder: true, unmatched: [...names], bad: 0 };
  }
  const scan = new RecordScan(names);
  try {
    forEachLine(fs, fd, chunkBytes, scan);
  } catch {
    return undefined;
  } finally {
    closeQuietly(fs, fd);
  }
  return scan.result();
}

const MATCH_CHUNK_BYTES = 256 * 1024;
/** Longer record bodies are checked from a view made for them (none that agent writes comes near). */
const SCRATCH_BYTES = 1024;

/** The first-claim scan's state: the names it looks for and what it found of them. */
class RecordScan {
  readonly #names: readonly string[];
  readonly #table: NameTable;
  /** Per name: 1 once a good record of it was found. */
  readonly #found: Uint8Array;
  readonly #order: Int32Array;
  readonly #times: Buffer;
  #count = 0;
  #inOrder = true;
  #bad = 0;
  /** A record body is copied here to be checksummed, through a view of its length (made once per length). */
  readonly #scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  readonly #views: Buffer[] = [];

  constructor(names: readonly string[]) {
    this.#names = names;
    this.#table = new NameTable(names);
    this.#found = new Uint8Array(names.length);
    this.#order = new Int32Array(names.length);
    this.#times = Buffer.allocUnsafe(names.length * TIME_WIDTH);
  }

  /** One line of the index: the newline at `start` in `chunk` up to `end`. */
  line(chunk: Buffer, start: number, end: number): void {
    const at = start + 9;
    if (end - at < NAME_END) return;
    const i = this.#table.find(chunk, at);
    if (i < 0 || this.#found[i] === 1) return;
    if (!this.#good(chunk, start, end)) {
      this.#bad += 1;
      return;
    }
    this.#found[i] = 1;
    const k = this.#count;
    if (this.#inOrder && k > 0 && this.#before(chunk, at, k - 1)) this.#inOrder = false;
    chunk.copy(this.#times, k * TIME_WIDTH, at + TIME_START, at + TIME_END);
    this.#order[k] = i;
    this.#count = k + 1;
  }

  result(): RecordMatch {
    const unmatched: string[] = [];
    for (let i = 0; i < this.#names.length; i++) if (this.#found[i] === 0) unmatched.push(this.#names[i]!);
    return {
      matched: this.#order.subarray(0, this.#count),
      times: this.#times.toString("latin1", 0, this.#count * TIME_WIDTH),
      inOrder: this.#inOrder,
      unmatched,
      bad: this.#bad,
    };
  }

  /** goodLine, on bytes: the line is a whole record whose checksum holds. */
  #good(chunk: Buffer, start: number, end: number): boolean {
    const at = start + 9;
    if (end - start <= 9 + TIME_END || chunk[at + NAME_END] !== TAB || chunk[at + TIME_END] !== TAB) return false;
    let sum = 0;
    for (let k = start + 1; k < at; k++) {
      const digit = hexValue(chunk[k]!);
      if (digit < 0) return false;
      sum = sum * 16 + digit;
    }
    const length = end - at;
    if (length > SCRATCH_BYTES) return sum === Bun.hash.crc32(chunk.subarray(at, end));
    chunk.copy(this.#scratch, 0, at, end);
    this.#views[length] ??= this.#scratch.subarray(0, length);
    return sum === Bun.hash.crc32(this.#views[length]);
  }

  /**
   * Whether the record at `at` in `chunk` comes before the `k`th one found in
   * FIFO order: by time, then by id (the name's first 36 characters).
   */
  #before(chunk: Buffer, at: number, k: number): boolean {
    const times = this.#times;
    const from = k * TIME_WIDTH;
    for (let j = 0; j < TIME_WIDTH; j++) {
      const d = chunk[at + TIME_START + j]! - times[from + j]!;
      if (d !== 0) return d < 0;
    }
    const earlier = this.#names[this.#order[k]!]!;
    for (let j = 0; j < ID_WIDTH; j++) {
      const d = chunk[at + j]! - earlier.charCodeAt(j);
      if (d !== 0) return d < 0;
    }
    return false;
  }
}

const ID_WIDTH = 36;

/**
 * Calls `scan.line` with each line of the file at `fd`, from its leading newline
 * to the next one (or the end of the file), in a chunk it is whole in. What
 * comes before the first newline is no record; nor is a line longer than a
 * chunk: it is skipped.
 */
function forEachLine(fs: FsOps, fd: number, chunkBytes: number, scan: RecordScan): void {
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let filled = 0;
  for (;;) {
    const got = fs.readSync(fd, chunk, filled, chunkBytes - filled, null);
    filled += got;
    const atEnd = got === 0;
    let start = chunk.indexOf(NEWLINE);
    if (start < 0 || start >= filled) {
      if (atEnd) return;
      // No line begins here: all of it is the tail of one too long to be a record.
      filled = 0;
      continue;
    }
    for (;;) {
      let next = chunk.indexOf(NEWLINE, start + 1);
      if (next >= filled) next = -1;
      if (next < 0) {
        if (atEnd) {
          scan.line(chunk, start, filled);
          return;
        }
        break;
      }
      scan.line(chunk, start, next);
      start = next;
    }
    if (start === 0 && filled === chunkBytes) {
      // One line fills the chunk: too long to be a record. Skip to the next newline.
      filled = 0;
      continue;
    }
    chunk.copyWithin(0, start, filled);
    filled -= start;
  }
}

const NEWLINE = 10;
const TAB = 9;

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/**
 * The listed names that can have a record (`<id>.json`, NAME_END characters), in an
 * open-addressed table of their positions keyed by a hash of their characters,
 * found from a record's bytes without making a string of them. The hash covers
 * every character: ids from one clock or one host share long runs of them.
 */
class NameTable {
  readonly #names: readonly string[];
  readonly #slots: Int32Array;
  readonly #mask: number;

  constructor(names: readonly string[]) {
    this.#names = names;
    let size = 16;
    while (size < names.length * 2) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      if (name.length !== NAME_END) continue;
      let hash = FNV_OFFSET;
      for (let k = 0; k < NAME_END; k++) hash = Math.imul(hash ^ name.charCodeAt(k), FNV_PRIME);
      let slot = hash & this.#mask;
      while (this.#slots[slot] !== 0) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = i + 1;
    }
  }

  /** The position in `names` of the name spelt by the NAME_END bytes of `chunk` from `at`; -1 when none is. */
  find(chunk: Buffer, at: number): number {
    let hash = FNV_OFFSET;
    for (let k = 0; k < NAME_END; k++) hash = Math.imul(hash ^ chunk[at + k]!, FNV_PRIME);
    for (let slot = hash & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const held = this.#slots[slot]!;
      if (held === 0) return -1;
      if (sameName(this.#names[held - 1]!, chunk, at)) return held - 1;
    }
  }
}

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

function sameName(name: string, chunk: Buffer, at: number): boolean {
  for (let k = 0; k < NAME_END; k++) if (name.charCodeAt(k) !== chunk[at + k]) return false;
  return true;
}

/**
 * For `list`: sets each name of `wanted` (file name → "", one per file listed) to
 * its last good record, checking only those lines: a record of a message no longer
 * there is never used. Returns how many lines the index has, and how many of those
 * checked were damaged. (The names listed are the map's keys and the index is only
 * probed: keying a map by 50 000 strings cut from the index cost more than the
 * listing's every lstat.)
 */
export function lookUpRecords(text: string, wanted: Map<string, string>): { lines: number; bad: number } {
  let lines = 0;
  let bad = 0;
  let start = text.indexOf("\n");
  if (start !== 0 && text.length > 0) bad += 1;
  while (start !== -1) {
    const next = text.indexOf("\n", start + 1);
    lines += 1;
    const name = text.slice(start + 9, start + 9 + NAME_END);
    if (wanted.has(name)) {
      const end = next === -1 ? text.length : next;
      if (goodLine(text, start, end)) wanted.set(name, text.slice(start + 9, end));
      else bad += 1;
    }
    start = next;
  }
  return { lines, bad };
}

/** Whether the line from the newline at `start` to `end` is a whole record whose checksum holds. */
function goodLine(text: string, start: number, end: number): boolean {
  return (
    end - start > 9 + TIME_END &&
    text.charCodeAt(start + 9 + NAME_END) === 9 &&
    text.charCodeAt(start + 9 + TIME_END) === 9 &&
    Number.parseInt(text.slice(start + 1, start + 9), 16) === Bun.hash.crc32(text.slice(start + 9, end))
  );
}

/** The index at `path` by file name; empty when it is missing or cannot be read (everything is then read from the files). */
export function readIndex(fs: FsOps, path: string): LoadedIndex {
  const text = readIndexText(fs, path);
  const records = new Map<string, string>();
  if (text === undefined) return { records, bad: 1 };
  const bad = scanRecords(text, (body) => records.set(recordName(body), body));
  return { records, bad };
}

function line(body: string): string {
  return `\n${Bun.hash.crc32(body).toString(16).padStart(8, "0")}${body}`;
}

/**
 * Appends `bodies` in one write. A failure is ignored: the messages are already
 * durable, and one without a record is read from its file, as before the index.
 */
export function appendRecords(fs: FsOps, path: string, bodies: readonly string[]): void {
  if (bodies.length === 0) return;
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, "a", 0o600);
    fs.writeSync(fd, bodies.map(line).join(""));
  } catch {
    // See above: nothing is lost.
  } finally {
    if (fd !== undefined) closeQuietly(fs, fd);
  }
}

/**
 * Replaces the index with exactly `bodies` (dropping damaged and stale records),
 * in FIFO order: written beside it and renamed over it. Not fsynced either — an index lost or torn
 * by a crash just means the files are read again.
 */
export function rewriteIndex(fs: FsOps, path: string, bodies: Iterable<string>): void {
  const temp = `${path}.tmp`;
  let text = "";
  for (const body of inFifoOrder(bodies)) text += line(body);
  try {
    fs.writeFileSync(temp, text, { mode: 0o600 });
    fs.renameSync(temp, path);
  } catch {
    try {
      fs.unlinkSync(temp);
    } catch {
      // Already gone, or the dir is unwritable: the next rewrite truncates it.
    }
  }
}

/**
 * Record bodies in FIFO order, `(createdAtUtc, id)`: the order a first claim wants
 * them in (it then need not sort). One native sort of `createdAtUtc + body` (a
 * body starts with its file name, so ties fall to the id).
 */
export function inFifoOrder(bodies: Iterable<string>): string[] {
  return Array.from(bodies, (body) => recordTime(body) + body)
    .sort()
    .map((key) => key.slice(TIME_END - TIME_START));
}

function closeQuietly(fs: FsOps, fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Nothing was pending on it.
  }
}
