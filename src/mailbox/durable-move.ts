import { awaitFsync, fsyncDirOffLoop, isErrno, pathExists } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { dirHandle, forgetDirHandle, pinned } from "../storage/dir-handles.ts";
import { AT_FDCWD } from "../storage/no-replace-rename.ts";
import { storageError } from "./failures.ts";
import type { DurableBatch } from "./group-commit.ts";

/** What a move did: "exists" and "missing" (when the caller allows it) moved nothing. */
export type MoveOutcome = "moved" | "exists" | "missing";

export interface Move {
  /** The directory the file is in, and the one it goes to; the name stays the same. */
  from: string;
  to: string;
  name: string;
  /** Names the transition in errors ("claim <id>"). */
  what: string;
  /** Whether a missing source is an answer ("missing") rather than a failure. */
  missingOk?: boolean;
}

/**
 * One durable transition that never replaces a file: the rename, then an fsync of
 * the destination directory. A rename is a single journal transaction on the
 * journaling file systems this runs on, so that one fsync makes both the new entry
 * and the removal of the old one durable — never both, never neither. On failure
 * the file is where it was (a rename whose fsync failed is undone).
 *
 * Where renameat2(RENAME_NOREPLACE) is available the kernel refuses an existing
 * target itself, and the move runs between kept directory descriptors (see
 * dir-handles.ts); elsewhere the target is looked for first, which the mailbox
 * lock makes safe, and the destination is opened for its fsync.
 *
 * The fsync waits off the event loop (other agents run meanwhile); the caller
 * holds the mailbox lock until it returns, so no other move sees the file
 * before it is durable, and an undo is still the truth.
 */
export async function moveDurably(fs: FsOps, move: Move, batch?: DurableBatch): Promise<MoveOutcome> {
  if (fs.renameNoReplaceSync) {
    // A descriptor kept from before may name a directory removed since: ENOENT then
    // says nothing about the message, so look once more through fresh ones.
    const first = await moveBetweenHandles(fs, move, false, batch);
    if (first !== "stale") return first === "unsupported" ? moveByPath(fs, move, batch) : first;
    forgetDirHandle(move.from, fs);
    forgetDirHandle(move.to, fs);
    const second = await moveBetweenHandles(fs, move, true, batch);
    if (second !== "stale") return second === "unsupported" ? moveByPath(fs, move, batch) : second;
  }
  return moveByPath(fs, move, batch);
}

/** In a batch, the fsync is the batch's (of `to`, the descriptor moved into, when there is one); the undo renames the file back by path. */
function deferred(fs: FsOps, move: Move, batch: DurableBatch, to?: number): "moved" {
  batch.step(move.to, () => fs.renameSync(`${move.to}/${move.name}`, `${move.from}/${move.name}`), to);
  return "moved";
}

async function moveBetweenHandles(fs: FsOps, move: Move, fresh: boolean, batch?: DurableBatch): Promise<MoveOutcome | "stale" | "unsupported"> {
  let from: number;
  let to: number;
  try {
    from = dirHandle(move.from, fs);
    to = dirHandle(move.to, fs);
    if (!fs.renameNoReplaceSync!(from, move.name, to, move.name)) return "unsupported";
  } catch (error) {
    if (isErrno(error, "EEXIST")) return "exists";
    if (isErrno(error, "ENOENT")) {
      if (!fresh) return "stale";
      if (move.missingOk) return "missing";
    }
    throw storageError(move.what, error, staysIn(move));
  }
  if (batch) return deferred(fs, move, batch, to);
  // Both kept open while the fsync waits: the undo may need them after it.
  return pinned(from, fs, () =>
    pinned(to, fs, async () => {
      try {
        await awaitFsync(to, fs);
      } catch (error) {
        // Not known to be durable: put it back so the caller's failure is the truth.
        try {
          if (!fs.renameNoReplaceSync!(to, move.name, from, move.name)) throw error;
        } catch {
          throw storageError(move.what, error, `the move could not be undone; the message is at ${move.to}/${move.name}`);
        }
        throw storageError(move.what, error, staysIn(move));
      }
      return "moved" as const;
    }),
  );
}

async function moveByPath(fs: FsOps, move: Move, batch?: DurableBatch): Promise<MoveOutcome> {
  const source = `${move.from}/${move.name}`;
  const target = `${move.to}/${move.name}`;
  try {
    if (pathExists(target, fs)) return "exists";
    fs.renameSync(source, target);
  } catch (error) {
    if (move.missingOk && isErrno(error, "ENOENT")) return "missing";
    throw storageError(move.what, error, staysIn(move));
  }
  if (batch) return deferred(fs, move, batch);
  try {
    await fsyncDirOffLoop(move.to, fs);
  } catch (error) {
    try {
      fs.renameSync(target, source);
    } catch {
      throw storageError(move.what, error, `the move could not be undone; the message is at ${target}`);
    }
    throw storageError(move.what, error, staysIn(move));
  }
  return "moved";
}

/**
 * Links `from` into `dir` as `name`, through the kept descriptor of `dir` where
 * the platform can (see dir-handles.ts, link-at.ts): returns that descriptor, the
 * one to fsync to make the link durable, or undefined when it linked by path.
 * With `missingOk`, a missing source is "missing" (nothing linked); otherwise,
 * like a missing directory, an ENOENT. A descriptor kept from before may name a
 * directory removed since: its ENOENT is looked at once more through a fresh one.
 */
export function linkInto(fs: FsOps, from: string, dir: string, name: string, missingOk: boolean): number | undefined | "missing" {
  if (fs.linkAtSync) {
    for (const fresh of [false, true]) {
      try {
        const handle = dirHandle(dir, fs);
        if (!fs.linkAtSync(AT_FDCWD, from, handle, name)) break;
        return handle;
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
        if (fresh) {
          if (missingOk && !pathExists(from, fs)) return "missing";
          throw error;
        }
        forgetDirHandle(dir, fs);
      }
    }
  }
  try {
    fs.linkSync(from, `${dir}/${name}`);
  } catch (error) {
    if (missingOk && isErrno(error, "ENOENT") && !pathExists(from, fs)) return "missing";
    throw error;
  }
  return undefined;
}

function staysIn(move: Move): string {
  return `the message stays in ${move.from.slice(move.from.lastIndexOf("/") + 1)}/`;
}
