import { type BigIntStats, constants } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import type { MailboxMessage } from "../core/message.ts";
import { checkMailboxMessage } from "../core/message-check.ts";
import { isMessageId, maxMessageFileBytes } from "../core/message-format.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { storageError } from "./failures.ts";

export type Checked = { ok: true; message: MailboxMessage } | { ok: false; reason: string };
/** A checked file, with its lstat from before it was read (for the index: see mailbox-index.ts). */
export type CheckedFile = { ok: true; message: MailboxMessage; stats: BigIntStats } | { ok: false; reason: string };

type EntryKind = { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Checks a directory entry's name and kind before its content is read: only a
 * regular file named `<canonical uuid>.json` can hold a message.
 */
export function checkEntry(name: string, stats: EntryKind): { ok: true; id: string } | { ok: false; reason: string } {
  if (stats.isSymbolicLink()) return { ok: false, reason: "entry is a symbolic link, not a regular file" };
  if (stats.isDirectory()) return { ok: false, reason: "entry is a directory, not a regular file" };
  if (!stats.isFile()) return { ok: false, reason: "entry is not a regular file" };
  if (!name.endsWith(".json")) return { ok: false, reason: "file name does not end in .json" };
  const id = name.slice(0, -".json".length);
  if (!isMessageId(id)) return { ok: false, reason: "file name is not a canonical lowercase UUID" };
  return { ok: true, id };
}

/**
 * Strictly parses a message file's bytes: UTF-8, JSON, the schema, and the id and
 * recipient must match the path the file was found at.
 */
export function checkMessageBytes(bytes: Uint8Array, expected: { id: string; recipient: AgentName }): Checked {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: "content is not valid UTF-8" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `content is not valid JSON (${(error as Error).message})` };
  }
  const parsed = checkMailboxMessage(json);
  if (!parsed.ok) return { ok: false, reason: `not a valid message: ${parsed.problem}` };
  const message = parsed.message;
  if (message.id !== expected.id) {
    return { ok: false, reason: `id ${message.id} does not match the file name ${expected.id}.json` };
  }
  if (message.recipient !== expected.recipient) {
    return { ok: false, reason: `recipient "${message.recipient}" does not match the mailbox "${expected.recipient}"` };
  }
  return { ok: true, message };
}

/**
 * Reads and strictly checks the message file at `path`; "gone" when nothing is there.
 *
 * One open, fstat, read and close, into a buffer kept for the next call: a claim
 * reads its head this way on every call. The open neither follows a symbolic link
 * (ELOOP) nor waits on a FIFO (O_NONBLOCK), and the kind is checked on what was
 * opened, so a path swapped between a look and the open cannot slip through.
 * Where it may (the file is this user's), the read leaves the access time alone:
 * updating it dirtied the inode, and the claim's fsync paid for writing it.
 */
export function readMessageAt(
  fs: FsOps,
  path: string,
  expected: { id: string; recipient: AgentName },
  maxContentBytes?: number,
): Checked | "gone" {
  let bytes: Uint8Array;
  let fd: number;
  try {
    fd = openForRead(fs, path);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return "gone";
    if (isErrno(error, "ELOOP")) return { ok: false, reason: "entry is a symbolic link, not a regular file" };
    // A socket cannot be opened at all.
    if (isErrno(error, "ENXIO")) return { ok: false, reason: "entry is not a regular file" };
    throw storageError(`read ${path}`, error, "nothing was changed");
  }
  try {
    const stats = fs.fstatSync(fd);
    if (stats.isDirectory()) return { ok: false, reason: "entry is a directory, not a regular file" };
    if (!stats.isFile()) return { ok: false, reason: "entry is not a regular file" };
    if (maxContentBytes !== undefined && stats.size > maxMessageFileBytes(maxContentBytes)) {
      // Not read: a file this size cannot hold a message under the cap, and reading
      // it whole is what the cap is there to prevent.
      return { ok: false, reason: `file is ${stats.size} bytes, too large for a message under the cap of ${maxContentBytes} content bytes (mailbox.maxContentBytes); not read` };
    }
    bytes = readWhole(fs, fd, stats.size);
  } catch (error) {
    throw storageError(`read ${path}`, error, "nothing was changed");
  } finally {
    fs.closeSync(fd);
  }
  const checked = checkMessageBytes(bytes, expected);
  if (checked.ok && maxContentBytes !== undefined) {
    const size = Buffer.byteLength(checked.message.content, "utf8");
    if (size > maxContentBytes) {
      return { ok: false, reason: `content is ${size} bytes, over the cap of ${maxContentBytes} (mailbox.maxContentBytes)` };
    }
  }
  return checked;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
// Linux only; allowed to the file's owner. Once refused (another user's state dir), never asked for again.
let noAtime: number = constants.O_NOATIME ?? 0;

function openForRead(fs: FsOps, path: string): number {
  if (noAtime !== 0) {
    try {
      return fs.openSync(path, READ_FLAGS | noAtime);
    } catch (error) {
      if (!isErrno(error, "EPERM")) throw error;
      noAtime = 0;
    }
  }
  return fs.openSync(path, READ_FLAGS);
}

// Messages are small: one buffer serves every read of one this size, without an
// allocation each time. A larger file gets its own.
const spare = Buffer.allocUnsafe(64 * 1024);

/**
 * The file's bytes, `size` as fstat gave it. Asking for one byte more tells in one
 * read that the end was reached (a short read of a regular file is its end); a file
 * that grew meanwhile is read on to its end. The bytes are valid until the next call.
 */
function readWhole(fs: FsOps, fd: number, size: number): Uint8Array {
  let buffer = size < spare.length ? spare : Buffer.allocUnsafe(size + 1);
  let length = 0;
  for (;;) {
    const wanted = buffer.length - length;
    const read = fs.readSync(fd, buffer, length, wanted, length);
    length += read;
    if (read < wanted) return buffer.subarray(0, length);
    const larger = Buffer.allocUnsafe(buffer.length * 2);
    buffer.copy(larger, 0, 0, length);
    buffer = larger;
  }
}

/** The full strict check of one directory entry: its kind, its name, then its content. */
export function checkFile(fs: FsOps, agent: AgentName, dir: string, name: string, maxContentBytes?: number): CheckedFile | "gone" {
  const path = join(dir, name);
  let stats: BigIntStats;
  try {
    stats = fs.lstatSync(path, { bigint: true });
  } catch (error) {
    if (isErrno(error, "ENOENT")) return "gone";
    throw storageError(`read ${path}`, error, "nothing was changed");
  }
  const entry = checkEntry(name, stats);
  if (!entry.ok) return entry;
  const checked = readMessageAt(fs, path, { id: entry.id, recipient: agent }, maxContentBytes);
  return checked === "gone" || !checked.ok ? checked : { ok: true, message: checked.message, stats };
}
