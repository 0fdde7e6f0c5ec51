import { fsyncDirOffLoop } from "../storage/atomic-file.ts";
import { pin, unpin } from "../storage/dir-handles.ts";
import type { FsOps } from "../storage/fs-ops.ts";

/**
 * The durable end of several mailbox calls made under one take of the lock
 * (group commit): each call does its renames and links at once and says which
 * directory must be fsynced and how its step is undone; `commit` fsyncs every
 * directory once (in parallel, off the event loop), and only then may any call
 * of the batch return. 32 acks into the Lead's done/ are one fsync, not 32.
 *
 * When an fsync fails, every step of the batch is undone, newest first, so each
 * message is where it was before the batch and every call of it fails: none
 * returned, so none was acted on. The lock is held until then, so no other
 * process sees a step before it is durable or undone.
 */
export class DurableBatch {
  readonly #fs: FsOps;
  /** Each directory to fsync, and the kept descriptor of it that steps went through, if they did (see dir-handles.ts). */
  readonly #dirs = new Map<string, { dir: string; handle: number | undefined }>();
  readonly #undo: (() => void)[] = [];
  readonly #meanwhile: (() => void)[] = [];

  constructor(fs: FsOps) {
    this.#fs = fs;
  }

  /**
   * A step that `dir`'s fsync makes durable, and how to take it back. Given
   * `handle`, the kept descriptor of `dir` the step was made through, the
   * commit fsyncs that one (held open until then) rather than open `dir`.
   */
  step(dir: string, undo: () => void, handle?: number): void {
    // A path and a descriptor may name different directories (one removed and made again): each is fsynced.
    const key = handle === undefined ? dir : `${dir}\0${handle}`;
    if (!this.#dirs.has(key)) {
      if (handle !== undefined) pin(handle);
      this.#dirs.set(key, { dir, handle });
    }
    this.#undo.push(undo);
  }

  /**
   * Runs while the commit's fsyncs are on the thread pool, so the event loop does
   * it in time it would spend waiting for the disk: work that must follow the
   * batch's steps but need not wait for them to be durable, such as an index
   * record (a cache whose record of a file that is not there is never used).
   * It runs whether or not the fsyncs then succeed.
   */
  whileCommitting(run: () => void): void {
    this.#meanwhile.push(run);
  }

  /**
   * fsyncs each directory once. On a failure undoes every step and throws
   * `{ error, undone }`: whether the batch is back where it was.
   */
  async commit(): Promise<void> {
    const dirs = [...this.#dirs.values()];
    const syncing = Promise.allSettled(dirs.map(({ dir, handle }) => fsyncDirOffLoop(dir, this.#fs, handle)));
    for (const run of this.#meanwhile) run();
    const synced = await syncing;
    for (const { handle } of dirs) if (handle !== undefined) unpin(handle, this.#fs);
    const failed = synced.find((result) => result.status === "rejected");
    if (failed) {
      let undone = true;
      for (const undo of this.#undo.reverse()) {
        try {
          undo();
        } catch {
          undone = false;
        }
      }
      throw new BatchFailure(failed.reason, undone);
    }
  }
}

/** A batch's fsync failed; `undone` says whether every step was taken back. */
export class BatchFailure {
  constructor(
    readonly error: unknown,
    readonly undone: boolean,
  ) {}
}
