import { fsyncDir, isErrno, pathExists } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { AT_FDCWD } from "../storage/no-replace-rename.ts";
import { storageError } from "./failures.ts";

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
 * target itself; elsewhere the target is looked for first, which the mailbox lock
 * makes safe.
 */
export function moveDurably(fs: FsOps, move: Move): MoveOutcome {
  const source = `${move.from}/${move.name}`;
  const target = `${move.to}/${move.name}`;
  const stays = `the message stays in ${lastPart(move.from)}/`;
  try {
    if (!fs.renameNoReplaceSync?.(AT_FDCWD, source, AT_FDCWD, target)) {
      if (pathExists(target, fs)) return "exists";
      fs.renameSync(source, target);
    }
  } catch (error) {
    if (isErrno(error, "EEXIST")) return "exists";
    if (move.missingOk && isErrno(error, "ENOENT")) return "missing";
    throw storageError(move.what, error, stays);
  }
  try {
    fsyncDir(move.to, fs);
  } catch (error) {
    // Not known to be durable: put it back so the caller's failure is the truth.
    try {
      fs.renameSync(target, source);
    } catch {
      throw storageError(move.what, error, `the move could not be undone; the message is at ${target}`);
    }
    throw storageError(move.what, error, stays);
  }
  return "moved";
}

function lastPart(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
