import { fsyncDirOffLoop } from "../storage/atomic-file.ts";
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
  readonly #dirs = new Set<string>();
  readonly #undo: (() => void)[] = [];
  readonly #after: (() => void)[] = [];

  constructor(fs: FsOps) {
    this.#fs = fs;
  }

  /** A step that `dir`'s fsync makes durable, and how to take it back. */
  step(dir: string, undo: () => void): void {
    this.#dirs.add(dir);
    this.#undo.push(undo);
  }

  /** Runs once the batch is durable (an index record must never name a message that is not there). */
  afterCommit(run: () => void): void {
    this.#after.push(run);
  }

  /**
   * fsyncs each directory once. On a failure undoes every step and throws
   * `{ error, undone }`: whether the batch is back where it was.
   */
  async commit(): Promise<void> {
    const synced = await Promise.allSettled([...this.#dirs].map((dir) => fsyncDirOffLoop(dir, this.#fs)));
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
    for (const run of this.#after) run();
  }
}

/** A batch's fsync failed; `undone` says whether every step was taken back. */
export class BatchFailure {
  constructor(
    readonly error: unknown,
    readonly undone: boolean,
  ) {}
}
