import type { BigIntStats } from "node:fs";
import type { MailboxMessage } from "../core/message.ts";
import type { FsOps } from "../storage/fs-ops.ts";

/** How many sent files a store remembers; the oldest is forgotten first (see docs/mailbox.md, "Performance"). */
export const SENT_FILES_BOUND = 4096;
/** And how many bytes of them at most (their file sizes): large messages are remembered fewer at a time. */
export const SENT_BYTES_BOUND = 16 * 1024 * 1024;

export type Stamp = BigIntStats;

interface SentFile {
  message: MailboxMessage;
  dev: bigint;
  ino: bigint;
  nlink: bigint;
  size: bigint;
  ctimeNs: bigint;
  mtimeNs: bigint;
}

/**
 * The files this store wrote into ready/, each with the message it wrote and
 * checked, and the file's identity and timestamps as they were after the link.
 * A claim that finds the file still a regular file with exactly those (one
 * lstat) needs not read and check it again: a write to it would have changed
 * its ctime and mtime, a replacement is another inode, a link or unlink of the
 * marker its link count and ctime. Anything else — no entry, a mismatch, an
 * error — and the claim reads the file strictly as it would without this.
 *
 * Keyed by the file's path. The messages are frozen objects the sender already
 * holds, but which the map keeps alive: at most `bound` of them and
 * SENT_BYTES_BOUND bytes of files, so a store that sends and never claims (a Lead
 * whose teammates run in other processes) holds no more than that.
 */
export class SentFiles {
  readonly #files = new Map<string, SentFile>();
  readonly #bound: number;
  #bytes = 0;

  constructor(bound = SENT_FILES_BOUND) {
    this.#bound = bound;
  }

  /**
   * The file at `path` as it is now (one lstat), taken right after the link into
   * ready/: undefined when it cannot be told, and the claim will read the file.
   */
  stamp(fs: FsOps, path: string): Stamp | undefined {
    try {
      const stats = fs.lstatSync(path, { bigint: true });
      return stats.isFile() ? stats : undefined;
    } catch {
      return undefined;
    }
  }

  /** Once the send is durable: `message` is what was written at `path`, as `stamp` saw it. */
  remember(path: string, stamp: Stamp | undefined, message: MailboxMessage): void {
    // Only a frozen message can be handed out again as it was checked.
    if (stamp === undefined || !Object.isFrozen(message)) return;
    this.forget(path);
    const size = Number(stamp.size);
    if (size > SENT_BYTES_BOUND) return;
    this.#bytes += size;
    this.#files.set(path, {
      message,
      dev: stamp.dev,
      ino: stamp.ino,
      nlink: stamp.nlink,
      size: stamp.size,
      ctimeNs: stamp.ctimeNs,
      mtimeNs: stamp.mtimeNs,
    });
    while (this.#files.size > this.#bound || this.#bytes > SENT_BYTES_BOUND) this.forget(this.#files.keys().next().value!);
  }

  /**
   * The message this store wrote at `path` when the file there is provably the
   * one it wrote, unchanged; undefined when it must be read. Either way the entry
   * is gone: a claim moves the file or finds it gone or bad.
   */
  take(fs: FsOps, path: string): MailboxMessage | undefined {
    const sent = this.#files.get(path);
    if (sent === undefined) return undefined;
    this.forget(path);
    let stats: BigIntStats;
    try {
      stats = fs.lstatSync(path, { bigint: true });
    } catch {
      return undefined;
    }
    const same =
      stats.isFile() &&
      stats.ino === sent.ino &&
      stats.dev === sent.dev &&
      stats.nlink === sent.nlink &&
      stats.size === sent.size &&
      stats.ctimeNs === sent.ctimeNs &&
      stats.mtimeNs === sent.mtimeNs;
    return same ? sent.message : undefined;
  }

  forget(path: string): void {
    const sent = this.#files.get(path);
    if (sent === undefined) return;
    this.#files.delete(path);
    this.#bytes -= Number(sent.size);
  }

  clear(): void {
    this.#files.clear();
    this.#bytes = 0;
  }
}
