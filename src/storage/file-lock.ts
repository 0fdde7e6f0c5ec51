import * as nodeFs from "node:fs";
import { dirname } from "node:path";
import lockfile from "proper-lockfile";
import { LockError } from "../core/errors.ts";
import { LockDir, isDeadHere, isLiveHere, readLockOwner, removeLockDir } from "./lock-dir.ts";
import { processMutexFor } from "./process-mutex.ts";

export interface FileLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long is taken to be left
   * by a dead process and is broken (at least 2 000 ms; the holder refreshes it
   * every second).
   */
  staleMs?: number;
  /** Give up waiting for the lock after this long. */
  waitMs?: number;
  /**
   * Keep the lock after the call for the next one, until the event loop turns or
   * it has been held this long (see Lease); 0, the default, gives it back at once.
   */
  leaseMs?: number;
}

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
 * (proper-lockfile would refuse this process a second time with ELOCKED), then the
 * cross-process lock directory. A lock left by a killed process goes stale after
 * `staleMs` (at once, when it was a process of this host) and is broken by the next
 * taker (see breakAbandonedLock).
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => T | Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, 2_000);
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const leaseMs = options.leaseMs ?? 0;
  const mutex = processMutexFor(lockPath);
  return mutex.run(async () => {
    let lease = leases.get(lockPath);
    leases.delete(lockPath);
    if (lease) clearTimeout(lease.timer);
    if (lease?.compromised) {
      // Lost while kept between calls: nothing ran under it; start again.
      await lease.release().catch(() => {});
      lease = undefined;
    }
    if (!lease) {
      const fresh: Lease = { since: Date.now(), release: async () => {} };
      fresh.release = await acquire(lockPath, staleMs, waitMs, (error) => {
        // The default throws from a timer and kills the process; record it instead
        // and fail the operation that was running under the lost lock.
        fresh.compromised ??= error;
      });
      lease = fresh;
    }
    const held = lease;
    try {
      return await work();
    } finally {
      if (!held.compromised && Date.now() - held.since < leaseMs) {
        keep(lockPath, held);
      } else {
        try {
          await held.release();
        } catch (error) {
          held.compromised ??= error as Error;
        }
      }
      if (held.compromised) {
        throw new LockError(`lost the lock ${lockPath} while holding it (${held.compromised.message}); retry the operation`, {
          cause: held.compromised,
        });
      }
    }
  });
}

/**
 * A cross-process lock this process keeps for a moment after the call that took
 * it, so the next call (a claim's ack, the next message of a burst) needs no new
 * take and give: each is two directory renames whose metadata the next fsync must
 * also commit. It is given back as soon as the event loop turns (this process has
 * gone idle, e.g. waiting for the model), or at the end of the call during which
 * it has been held `leaseMs`, so a busy process cannot keep others out for longer.
 * Mutual exclusion is unchanged: the lock is held throughout; a process killed
 * while keeping it is a dead owner like any other.
 */
interface Lease {
  release: () => Promise<void>;
  since: number;
  compromised?: Error;
  timer?: ReturnType<typeof setTimeout>;
}

const leases = new Map<string, Lease>();

function keep(lockPath: string, lease: Lease): void {
  leases.set(lockPath, lease);
  lease.timer = setTimeout(() => void giveBack(lockPath, lease), 0);
}

async function giveBack(lockPath: string, lease: Lease): Promise<void> {
  await processMutexFor(lockPath).run(async () => {
    if (leases.get(lockPath) !== lease) return; // taken over by a call meanwhile
    leases.delete(lockPath);
    clearTimeout(lease.timer);
    await lease.release().catch(() => {
      // Nothing ran under it since the last call, which succeeded: nothing to report.
    });
  });
}

/** Gives back every lock this process keeps between calls (see Lease); for tests and shutdown. */
export async function releaseKeptLocks(): Promise<void> {
  await Promise.all([...leases.entries()].map(([lockPath, lease]) => giveBack(lockPath, lease)));
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
      const code = (error as { code?: string }).code;
      if (code === "EACCES" || code === "EROFS" || code === "EPERM") {
        throw new LockError(
          `cannot write to ${dirname(lockPath)} (${code}): this command changes the state dir, which needs write access; ` +
            "make it writable, or use a command that only reads (mailbox list, mailbox show)",
          { cause: error, readOnly: true },
        );
      }
      if (code !== "ELOCKED") {
        throw new LockError(`could not take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
      }
      if (breakAbandonedLock(lockPath, staleMs)) continue;
      if (Date.now() >= deadline) {
        const owner = readLockOwner(lockPath);
        const who = owner ? `pid ${owner.pid} on host ${owner.host}` : "another process";
        throw new LockError(
          `could not take the lock ${lockPath} within ${Math.round(waitMs / 1000)} s: ${who} holds it; ` +
            `wait for it to finish, or stop it and retry`,
          { cause: error },
        );
      }
      const ceiling = Math.min(MAX_RETRY_DELAY_MS, 2 ** Math.min(attempt, 5));
      await Bun.sleep(Math.random() * ceiling);
    }
  }
}
