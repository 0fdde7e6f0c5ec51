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
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale: staleMs,
        retries: {
          retries: Math.ceil(waitMs / MAX_RETRY_DELAY_MS),
          minTimeout: 1,
          maxTimeout: MAX_RETRY_DELAY_MS,
          factor: 1.5,
          randomize: true,
        },
        // The default throws from a timer and kills the process; record it instead
        // and fail the operation that was running under the lost lock.
        onCompromised: (error) => {
          compromised = error;
        },
      });
    } catch (error) {
      if ((error as { code?: string }).code !== "ELOCKED") {
        throw new LockError(`could not take the lock ${lockPath}: ${(error as Error).message}`, { cause: error });
      }
      throw new LockError(
        `could not take the lock ${lockPath} within ${Math.round(waitMs / 1000)} s: another process holds it; ` +
          `if none is running, the lock goes stale after ${staleMs / 1000} s — retry then`,
        { cause: error },
      );
    }
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
