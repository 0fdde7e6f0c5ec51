import { type BigIntStats, existsSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Clock, systemClock } from "../core/clock.ts";
import { LockError, StateDirBusyError } from "../core/errors.ts";
import { INVALID_UTC_INSTANT, Problems, UTC_INSTANT, isPlainRecord, pick } from "../core/plain-check.ts";
// Imported statically on purpose: it brings signal-exit, whose SIGINT listener
// re-raises the signal when it finds itself the only listener left. Loaded after
// a run installed its own once-listener (src/cli/run/stop.ts), it would find just
// that — the once-listener is removed as it fires — and kill the run before it
// prints its result. Reading commands avoid it by not loading this module at all.
import lockfile from "proper-lockfile";
import { ensureDir, isErrno, writeFileAtomic } from "./atomic-file.ts";
import { withFileLock } from "./file-lock.ts";
import { isProcessAlive, processStartTicks } from "./process-liveness.ts";

/**
 * Ownership of a state dir by one live runtime (`agent run` / `drain`), SPEC §3–4.
 *
 * `runtime.lock` is a proper-lockfile directory whose mtime the owner refreshes; it goes
 * stale `staleMs` after the owner stops refreshing it (the only rule that works across
 * hosts). On the owner's own host a dead pid makes it stale at once, so a runtime killed
 * with -9 does not block the next one for `staleMs`.
 *
 * `runtime.owner.json` says who holds it and which lock directory (by inode) it took. The
 * filesystem reuses a removed directory's inode for the next mkdir, so the inode alone
 * cannot tell a new lock from its dead predecessor: every create, break and owner write
 * (and every owner read) happens under the short `runtime.lock.break` lock, so nobody sees
 * a fresh `runtime.lock` beside the previous owner's record.
 */
export interface RuntimeOwner {
  pid: number;
  host: string;
  startedAtUtc: string;
}

/** A live lock whose owner record is missing or unreadable: busy, but we cannot say who holds it. */
export const UNKNOWN_OWNER: Readonly<RuntimeOwner> = Object.freeze({ pid: 0, host: "unknown", startedAtUtc: "" });

export interface OwnerRecord {
  pid: number;
  host: string;
  startedAtUtc: string;
  /** A string: inode numbers can exceed 2^53 and JSON numbers would round them. */
  lockIno: string;
  /** The owner's start time in clock ticks (Linux): tells a reused pid from the owner. */
  pidStart?: string;
}

const RECORD_FIELDS = ["pid", "host", "startedAtUtc", "lockIno", "pidStart"] as const;
const DIGITS = /^\d+$/;

/**
 * The owner record, checked by hand (every command that opens a session may read
 * it, and zod would be most of a reading command's start-up); the same rules as a
 * zod schema are in lock-owner-schemas.ts, held to agree by a test.
 */
export function checkOwnerRecord(value: unknown): OwnerRecord | undefined {
  if (!isPlainRecord(value)) return undefined;
  const problems = new Problems();
  problems.unknownKeys(value, new Set(RECORD_FIELDS));
  problems.positiveInt(value, "pid");
  const host = problems.string(value, "host");
  if (host === "") problems.add("host", "Too small: expected string to have >=1 characters");
  problems.matching(value, "startedAtUtc", UTC_INSTANT, INVALID_UTC_INSTANT);
  problems.matching(value, "lockIno", DIGITS, "Invalid string: must match pattern /^\\d+$/");
  problems.optional(value, "pidStart", (v, k) => problems.matching(v, k, DIGITS, "Invalid string: must match pattern /^\\d+$/"));
  return problems.empty ? pick<OwnerRecord>(value, RECORD_FIELDS) : undefined;
}

export interface RuntimeLockOptions {
  /** How long to keep retrying a busy state dir; 0 (the default) fails at once. */
  waitMs?: number;
  /** Mtime staleness, for owners on other hosts or with an unreadable record (≥ 2000). */
  staleMs?: number;
  /** Called (from a timer: it must not throw) when the lock is lost while held. */
  onLost?: (error: Error) => void;
  clock?: Clock;
}

const DEFAULT_STALE_MS = 10_000;
const MIN_STALE_MS = 2_000; // proper-lockfile's floor
const RETRY_DELAY_MS = 100;
const BREAK_LOCK_WAIT_MS = 10_000;

type Paths = { dir: string; lock: string; breakLock: string; owner: string };

function pathsFor(stateDir: string): Paths {
  const dir = resolve(stateDir);
  return {
    dir,
    lock: join(dir, "runtime.lock"),
    breakLock: join(dir, "runtime.lock.break"),
    owner: join(dir, "runtime.owner.json"),
  };
}

type LockState =
  | { kind: "free" }
  | { kind: "stale" } // mtime older than staleMs
  | { kind: "dead"; owner: RuntimeOwner } // owner on this host is no longer running
  | { kind: "live"; owner: RuntimeOwner | undefined };

export class RuntimeLock {
  readonly #stateDir: string;
  readonly #owner: RuntimeOwner;
  readonly #onLost: ((error: Error) => void) | undefined;
  #release: (() => Promise<void>) | undefined;
  #lost: Error | undefined;

  private constructor(stateDir: string, owner: RuntimeOwner, release: () => Promise<void>, onLost?: (e: Error) => void) {
    this.#stateDir = stateDir;
    this.#owner = owner;
    this.#release = release;
    this.#onLost = onLost;
  }

  static async acquire(stateDir: string, options: RuntimeLockOptions = {}): Promise<RuntimeLock> {
    const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, MIN_STALE_MS);
    const clock = options.clock ?? systemClock;
    const paths = pathsFor(stateDir);
    ensureDir(paths.dir);

    let lock: RuntimeLock | undefined;
    let lostEarly: Error | undefined;
    const onCompromised = (error: Error) => (lock ? lock.#markLost(error) : (lostEarly ??= error));

    const deadline = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      const result = await withFileLock(paths.breakLock, () => take(paths, staleMs, clock, onCompromised), {
        waitMs: BREAK_LOCK_WAIT_MS,
      });
      if ("release" in result) {
        lock = new RuntimeLock(stateDir, result.owner, result.release, options.onLost);
        if (lostEarly) lock.#markLost(lostEarly);
        return lock;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new StateDirBusyError(
          stateDir,
          result.busyWith,
          `wait for it to finish, pass --wait-lock to wait for it, or, if that runtime is gone, retry in ${staleMs / 1000} s once its lock goes stale`,
        );
      }
      await sleep(Math.min(RETRY_DELAY_MS, remaining));
    }
  }

  get owner(): RuntimeOwner {
    return this.#owner;
  }

  /** Throws if the lock was released or lost: call before work that needs exclusive ownership. */
  assertHeld(): void {
    if (this.#lost) {
      throw new LockError(
        `lost the runtime lock on ${this.#stateDir} (${this.#lost.message}); another runtime may own it now — stop and restart`,
        { cause: this.#lost },
      );
    }
    if (!this.#release) throw new LockError(`the runtime lock on ${this.#stateDir} was already released`);
  }

  async release(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    // A lost lock is no longer ours to remove: the directory may be another runtime's now.
    if (!release || this.#lost) return;
    try {
      await release();
    } catch (error) {
      if (!isErrno(error, "ERELEASED")) {
        throw new LockError(`could not release the runtime lock on ${this.#stateDir}`, { cause: error });
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  #markLost(error: Error): void {
    this.#lost ??= error;
    this.#onLost?.(error);
  }
}

/**
 * The live owner of the state dir, or null when it is free or its lock is stale (owner
 * dead on this host, or not refreshed for `staleMs`). A live lock without a readable
 * owner record yields UNKNOWN_OWNER, never null.
 */
export async function readRuntimeOwner(
  stateDir: string,
  options: { staleMs?: number } = {},
): Promise<RuntimeOwner | null> {
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, MIN_STALE_MS);
  const paths = pathsFor(stateDir);
  // Checked first so a read of a missing or never-run state dir creates nothing.
  if (!existsSync(paths.lock)) return null;
  const state = await withFileLock(paths.breakLock, () => inspect(paths, staleMs), { waitMs: BREAK_LOCK_WAIT_MS });
  return state.kind === "live" ? (state.owner ?? { ...UNKNOWN_OWNER }) : null;
}

/** One attempt, under the break lock: take the lock, or break it if its owner died, or report who holds it. */
async function take(
  paths: Paths,
  staleMs: number,
  clock: Clock,
  onCompromised: (error: Error) => void,
): Promise<{ release: () => Promise<void>; owner: RuntimeOwner } | { busyWith: RuntimeOwner | undefined }> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    let release: () => Promise<void>;
    try {
      // proper-lockfile itself removes a lock whose mtime is older than staleMs.
      release = await lockfile.lock(paths.lock, {
        lockfilePath: paths.lock,
        realpath: false,
        stale: staleMs,
        retries: 0,
        onCompromised,
      });
    } catch (error) {
      if (!isErrno(error, "ELOCKED")) throw new LockError(`could not take ${paths.lock}`, { cause: error });
      const state = inspect(paths, staleMs);
      if (state.kind === "live") return { busyWith: state.owner };
      if (state.kind === "dead") removeLockDir(paths.lock);
      continue; // free or stale now (released or aged meanwhile): try again
    }
    try {
      const owner = { pid: process.pid, host: hostname(), startedAtUtc: clock.now().toISOString() };
      const pidStart = processStartTicks();
      const record: OwnerRecord = {
        ...owner,
        lockIno: statSync(paths.lock, { bigint: true }).ino.toString(),
        ...(pidStart === undefined ? {} : { pidStart }),
      };
      writeFileAtomic(paths.owner, `${JSON.stringify(record, null, 2)}\n`);
      return { release, owner };
    } catch (error) {
      await release().catch(() => {});
      throw error;
    }
  }
  return { busyWith: undefined };
}

function inspect(paths: Paths, staleMs: number): LockState {
  let stat: BigIntStats;
  try {
    stat = statSync(paths.lock, { bigint: true });
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { kind: "free" };
    throw error;
  }
  if (Number(stat.mtimeMs) < Date.now() - staleMs) return { kind: "stale" };
  const record = readOwnerRecord(paths.owner);
  // No readable record for this directory (corrupt, or its creator died before writing it
  // under the break lock we now hold): we cannot tell who holds it, so only mtime frees it.
  if (!record || record.lockIno !== stat.ino.toString()) return { kind: "live", owner: undefined };
  const owner = { pid: record.pid, host: record.host, startedAtUtc: record.startedAtUtc };
  if (record.host === hostname() && !isProcessAlive(record.pid, record.pidStart)) return { kind: "dead", owner };
  return { kind: "live", owner };
}

/** The owner record, or undefined when missing or corrupt: an unreadable record must not stop the runtime. */
function readOwnerRecord(path: string): OwnerRecord | undefined {
  try {
    return checkOwnerRecord(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return undefined;
  }
}

function removeLockDir(path: string): void {
  try {
    rmdirSync(path);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw new LockError(`could not break the dead runtime lock ${path}`, { cause: error });
  }
}
