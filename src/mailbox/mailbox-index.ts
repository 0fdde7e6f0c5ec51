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
 * Records are appended under the mailbox lock, after the send they describe is
 * durable, and never fsynced (a lost one only costs a read). Each is one line
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

/**
 * For a first claim: calls `found` with the name and time of each good record whose
 * name is in `names`, in the order they were appended, taking the name out of
 * `names` (so each is found once, and what is left has no record). Only those
 * lines are checked: a damaged record of anything else is never used. Returns how
 * many of them were damaged.
 */
export function matchRecords(text: string, names: Set<string>, found: (name: string, createdAtUtc: string) => void): number {
  let bad = 0;
  let start = text.indexOf("\n");
  while (start !== -1) {
    const next = text.indexOf("\n", start + 1);
    // Cut by position, not by parsing: a line too short or misshapen fails goodLine.
    const name = text.slice(start + 9, start + 9 + NAME_END);
    if (names.delete(name)) {
      if (goodLine(text, start, next === -1 ? text.length : next)) {
        found(name, text.slice(start + 9 + TIME_START, start + 9 + TIME_END));
      } else {
        names.add(name);
        bad += 1;
      }
    }
    start = next;
  }
  return bad;
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
