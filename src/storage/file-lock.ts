import * as nodeFs from "node:fs";
import lockfile from "proper-lockfile";
import { LockError } from "../core/errors.ts";
import { processMutexFor } from "./process-mutex.ts";

export interface FileLockOptions {
  /** A lock whose holder stopped refreshing it for this long is broken (≥ 2000 ms, proper-lockfile's floor). */
  staleMs?: number;
  /** Give up waiting for the lock after this long. */
  waitMs?: number;
}

const DEFAULT_STALE_MS = 2_000;
const DEFAULT_WAIT_MS = 60_000;
const MAX_RETRY_DELAY_MS = 20;

type Callback<T> = (error: NodeJS.ErrnoException | null, value?: T) => void;

function viaSync<A extends unknown[], T>(call: (...args: A) => T) {
  return (...args: [...A, Callback<T>]) => {
    const callback = args.pop() as Callback<T>;
    let value: T;
    try {
      value = call(...(args as unknown as A));
    } catch (error) {
      process.nextTick(callback, error as NodeJS.ErrnoException);
      return;
    }
    process.nextTick(callback, null, value);
  };
}

/**
 * The calls proper-lockfile makes, done synchronously. Its default (graceful-fs,
 * async) costs four thread-pool round trips per lock, which made the lock several
 * times dearer than the fsync'ed rename it protects. Each call is one quick
 * metadata syscall; the results still arrive asynchronously, as it expects.
 */
const lockFs = {
  mkdir: viaSync((path: string) => nodeFs.mkdirSync(path, { mode: 0o700 })),
  rmdir: viaSync((path: string) => nodeFs.rmdirSync(path)),
  stat: viaSync((path: string) => nodeFs.statSync(path)),
  utimes: viaSync((path: string, atime: Date, mtime: Date) => nodeFs.utimesSync(path, atime, mtime)),
  realpath: viaSync((path: string) => nodeFs.realpathSync(path)),
  rmdirSync: (path: string) => nodeFs.rmdirSync(path),
};

/**
 * Runs `work` while holding both locks for `lockPath`: the in-process mutex first
 * (proper-lockfile would refuse this process a second time with ELOCKED), then the
 * cross-process lock directory. A lock left by a killed process goes stale after
 * `staleMs` and is broken by the next taker.
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => T | Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, 2_000);
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  return processMutexFor(lockPath).run(async () => {
    let compromised: Error | undefined;
    const release = await acquire(lockPath, staleMs, waitMs, (error) => {
      // The default throws from a timer and kills the process; record it instead
      // and fail the operation that was running under the lost lock.
      compromised = error;
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
  });
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
        fs: lockFs,
        stale: staleMs,
        retries: 0,
        onCompromised,
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== "ELOCKED") {
        throw new LockError(`could not take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
      }
      if (Date.now() >= deadline) {
        throw new LockError(
          `could not take the lock ${lockPath} within ${Math.round(waitMs / 1000)} s: another process holds it; ` +
            `if none is running, the lock goes stale after ${staleMs / 1000} s — retry then`,
          { cause: error },
        );
      }
      const ceiling = Math.min(MAX_RETRY_DELAY_MS, 2 ** Math.min(attempt, 5));
      await Bun.sleep(Math.random() * ceiling);
    }
  }
}
