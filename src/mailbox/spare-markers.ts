import { type BigIntStats, constants } from "node:fs";
import { FILE_MODE, awaitFsync, openWhereCheap, unlinkQuietly, writeAll } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { AT_FDCWD } from "../storage/no-replace-rename.ts";

/** The most spares one store keeps made (a team of 32 ends with 64 sends). */
const MOST = 128;

/**
 * Empty files in `mailboxes/.ids/`, `.spare.<pid>.<n>`, each the inode of a
 * message this process will send. A send's marker is otherwise created as it
 * is sent, and a create can cost far more than a write: on this machine's ext4
 * ~1 ms after many deletes (see openWhereCheap), and 32 teammates finishing
 * together make 64 of them in one directory, one after another, on the way
 * from their answers to the Lead's turn. Made ahead, while the teammates wait
 * for their model, a send writes into one and renames it to its marker without
 * replacing anything (renameat2), so its uniqueness check is the same.
 *
 * A spare is never fsynced until used: the marker it becomes is. A process that
 * dies leaves its spares; like orphan markers (an inode no message shares),
 * `agent mailbox prune` removes them once they are older than its cut-off.
 */
export class SpareMarkers {
  readonly #dir: string;
  readonly #fs: FsOps;
  readonly #ready: string[] = [];
  #making = 0;
  #made = 0;
  /** The rename without replacing said it cannot be done here (not Linux, a file system without it): no more are made. */
  #unusable = false;

  constructor(dir: string, fs: FsOps) {
    this.#dir = dir;
    this.#fs = fs;
  }

  /**
   * Makes `count` more in the background, up to MOST; where they cannot be used
   * (no renameat2), none. The promise settles once those it started are made or
   * given up: nobody needs to wait for it, a test may.
   */
  reserve(count: number): Promise<void> {
    const started: Promise<void>[] = [];
    if (!this.#fs.renameNoReplaceSync || this.#unusable) return Promise.resolve();
    for (let i = 0; i < count && this.#ready.length + this.#making < MOST; i++) {
      this.#made += 1;
      const path = `${this.#dir}/.spare.${process.pid}.${this.#made}`;
      this.#making += 1;
      const making = openWhereCheap(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE, this.#fs)
        .then(
          (fd) => {
            this.#fs.closeSync(fd);
            this.#ready.push(path);
          },
          () => {
            // Not made (.ids/ missing yet, a name a dead process left): that send creates its marker.
          },
        )
        .finally(() => {
          this.#making -= 1;
        });
      started.push(making);
    }
    return Promise.all(started).then(() => {});
  }

  /** How many are made and not used. */
  get available(): number {
    return this.#ready.length;
  }

  /**
   * Writes `text` into a spare, fsyncs it and renames it to `marker` if nothing
   * is there: what creating `marker` exclusively and writing it does. Returns
   * the marker's stat as it is then, or undefined when no spare could be used
   * (none made, one removed meanwhile, a platform that cannot rename without
   * replacing): the caller creates the marker. Throws as a create would when
   * `marker` exists (EEXIST), or when a write or the fsync fails; the spare is
   * gone then.
   */
  async writeAs(marker: string, text: string): Promise<BigIntStats | undefined> {
    const rename = this.#fs.renameNoReplaceSync;
    const spare = rename ? this.#ready.pop() : undefined;
    if (!rename || spare === undefined) return undefined;
    let fd: number;
    try {
      fd = this.#fs.openSync(spare, constants.O_WRONLY);
    } catch {
      return undefined;
    }
    let renamed = false;
    try {
      writeAll(fd, text, this.#fs);
      await awaitFsync(fd, this.#fs);
      renamed = rename(AT_FDCWD, spare, AT_FDCWD, marker);
      if (!renamed) {
        this.#unusable = true;
        return undefined;
      }
      // After the rename, which changed the inode's change time: the marker as a later look finds it.
      return this.#fs.fstatSync(fd, { bigint: true });
    } finally {
      this.#fs.closeSync(fd);
      if (!renamed) unlinkQuietly(spare, this.#fs);
    }
  }
}
