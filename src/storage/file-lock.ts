import * as nodeFs from "node:fs";
import { dirname } from "node:path";
import { LockError } from "../core/errors.ts";
import { LockDir, isDeadHere, isLiveHere, readLockOwner, removeLockDir } from "./lock-dir.ts";
import { type OsLock, openOsLock } from "./os-lock.ts";
import { processMutexFor } from "./process-mutex.ts";

export interface FileLockOptions {
  /**
   * A lock directory whose holder stopped refreshing it for this long is taken to
   * be left by a dead process and is broken (at least 2 000 ms; the holder
   * refreshes it every second). The OS lock needs no such rule.
   */
  staleMs?: number;
  /** Give up waiting for the lock after this long. */
  waitMs?: number;
  /**
   * "os" (the default where the platform has it): flock(2) on `<lockPath>.flock`;
   * "dir": the lock directory at `lockPath`, the fallback elsewhere. All processes
   * sharing a lock must use the same one — they do, being the same program on one
   * host; tests of the fallback ask for it explicitly.
   */
  mechanism?: LockMechanism;
}

export type LockMechanism = "os" | "dir";

// Generous on purpose: breaking the lock of a holder that is only slow (a long
// fsync on a loaded disk) would let two processes in. A dead holder costs the
// next taker this long, and dying inside a critical section is rare.
export const DEFAULT_STALE_MS = 10_000;
const REFRESH_MS = 1_000;
// proper-lockfile's own stale breaking checks and removes in separate steps, so
// several waiters that saw the same stale lock each remove the lock the previous
// one just took. It is switched off (a staleness it never reaches) in favour of
// breakAbandonedLock below.
const NEVER_STALE_MS = 365 * 24 * 3_600_000;
const DEFAULT_WAIT_MS = 60_000;
const MAX_RETRY_DELAY_MS = 20;

// One LockDir per lock path in this process, each with its spare directory,
// removed when the process exits.
const lockDirs = new Map<string, LockDir>();
process.on("exit", () => {
  for (const dir of lockDirs.values()) dir.dispose();
});

function lockDirFor(lockPath: string): LockDir {
  let dir = lockDirs.get(lockPath);
  if (!dir) {
    dir = new LockDir(lockPath);
    lockDirs.set(lockPath, dir);
  }
  return dir;
}

/** Whether `path` exists and was last modified more than `ms` ago; false when it is gone. */
function staleFor(path: string, ms: number): boolean {
  try {
    return nodeFs.statSync(path).mtimeMs < Date.now() - ms;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/**
 * Whether the holder of `lockPath` is gone: a dead process of this host at once;
 * otherwise no refresh for `staleMs` — or, for a live process of this host (its
 * pid may have been reused), for ten times that.
 */
function abandoned(lockPath: string, staleMs: number): boolean {
  const owner = readLockOwner(lockPath);
  if (isDeadHere(owner)) return nodeFs.existsSync(lockPath);
  return staleFor(lockPath, isLiveHere(owner) ? staleMs * 10 : staleMs);
}

/**
 * Removes `lockPath` if its holder is gone, deciding and removing under a second,
 * short lock (`<lockPath>.break`, a plain exclusive mkdir) so that two waiters
 * never both act on one observation: the second looks again after the first is
 * done, and finds the first one's fresh lock. Returns whether it broke it.
 */
function breakAbandonedLock(lockPath: string, staleMs: number): boolean {
  if (!abandoned(lockPath, staleMs)) return false;
  const breakPath = `${lockPath}.break`;
  try {
    nodeFs.mkdirSync(breakPath, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // Held for microseconds by its taker: one this old belongs to a process that
    // died holding it.
    if (staleFor(breakPath, staleMs)) removeLockDir(breakPath);
    return false;
  }
  try {
    if (!abandoned(lockPath, staleMs)) return false;
    removeLockDir(lockPath);
    return true;
  } finally {
    removeLockDir(breakPath);
  }
}

/**
 * Runs `work` while holding both locks for `lockPath`: the in-process mutex first
 * (neither lock tells two callers of one process apart), then the cross-process
 * lock — flock(2) where the platform has it (see os-lock.ts), else the lock
 * directory, which a killed process leaves behind until it goes stale after
 * `staleMs` (at once, when it was a process of this host; see breakAbandonedLock).
 * Either is given back when `work` ends.
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => T | Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  return processMutexFor(lockPath).run(async () => {
    const os = options.mechanism === "dir" ? undefined : osLockFor(lockPath);
    if (os) return withOsLock(lockPath, os, work, waitMs);
    return withLockDir(lockPath, work, Math.max(options.staleMs ?? DEFAULT_STALE_MS, 2_000), waitMs);
  });
}

// One OS lock (one open file) per lock path in this process; `null` where the
// platform has none. The file stays open: opening is the dearest part.
const osLocks = new Map<string, OsLock | null>();

function osLockFor(lockPath: string): OsLock | undefined {
  let lock = osLocks.get(lockPath);
  if (lock === undefined) {
    try {
      lock = openOsLock(`${lockPath}.flock`) ?? null;
    } catch (error) {
      throw lockSetupError(lockPath, error);
    }
    osLocks.set(lockPath, lock);
  }
  return lock ?? undefined;
}

async function withOsLock<T>(lockPath: string, lock: OsLock, work: () => T | Promise<T>, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    let taken: boolean;
    try {
      taken = lock.tryTake();
    } catch (error) {
      throw new LockError(`could not take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
    }
    if (taken) break;
    if (Date.now() >= deadline) {
      const holders = lock.holders();
      throw busyError(lockPath, waitMs, holders.length > 0 ? `pid ${holders.join(", ")} on this host` : "another process");
    }
    await Bun.sleep(retryDelay(attempt));
  }
  try {
    return await work();
  } finally {
    lock.give();
  }
}

async function withLockDir<T>(lockPath: string, work: () => T | Promise<T>, staleMs: number, waitMs: number): Promise<T> {
  let compromised: Error | undefined;
  const release = await acquire(lockPath, staleMs, waitMs, (error) => {
    // The default throws from a timer and kills the process; record it instead
    // and fail the operation that was running under the lost lock.
    compromised ??= error;
  });
  try {
    return await work();
  } finally {
    try {
      await release();
    } catch (error) {
      compromised ??= error as Error;
    }
    if (compromised) {
      throw new LockError(`lost the lock ${lockPath} while holding it (${compromised.message}); retry the operation`, {
        cause: compromised,
      });
    }
  }
}

function lockSetupError(lockPath: string, error: unknown): LockError {
  const code = (error as { code?: string }).code;
  if (code === "EACCES" || code === "EROFS" || code === "EPERM") {
    return new LockError(
      `cannot write to ${dirname(lockPath)} (${code}): this command changes the state dir, which needs write access; ` +
        "make it writable, or use a command that only reads (mailbox list, mailbox show)",
      { cause: error, readOnly: true },
    );
  }
  return new LockError(`could not take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
}

function busyError(lockPath: string, waitMs: number, who: string): LockError {
  return new LockError(
    `could not take the lock ${lockPath} within ${Math.round(waitMs / 1000)} s: ${who} holds it; ` +
      "wait for it to finish, or stop it and retry",
  );
}

/** Short jittered waits, growing to MAX_RETRY_DELAY_MS: waiters neither spin nor line up. */
function retryDelay(attempt: number): number {
  return Math.random() * Math.min(MAX_RETRY_DELAY_MS, 2 ** Math.min(attempt, 5));
}

/**
 * Takes the lock, retrying on ELOCKED with short jittered waits until `waitMs`.
 * The retry loop is ours rather than proper-lockfile's: its `retries` option
 * builds the whole schedule of delays on every call, which for a long wait made
 * an uncontended lock cost more than the work it protects.
 */
async function acquire(
  lockPath: string,
  staleMs: number,
  waitMs: number,
  onCompromised: (error: Error) => void,
): Promise<() => Promise<void>> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      // Loaded here, on the fallback's first take: the OS lock needs none of it, and
      // with graceful-fs it is a good part of a reading command's start-up.
      const { default: lockfile } = await import("proper-lockfile");
      return await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        fs: lockDirFor(lockPath).fs,
        stale: NEVER_STALE_MS,
        update: REFRESH_MS,
        retries: 0,
        onCompromised,
      });
    } catch (error) {
      if ((error as { code?: string }).code !== "ELOCKED") throw lockSetupError(lockPath, error);
      if (breakAbandonedLock(lockPath, staleMs)) continue;
      if (Date.now() >= deadline) {
        const owner = readLockOwner(lockPath);
        throw busyError(lockPath, waitMs, owner ? `pid ${owner.pid} on host ${owner.host}` : "another process");
      }
      await Bun.sleep(retryDelay(attempt));
    }
  }
}
