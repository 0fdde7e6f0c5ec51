import { existsSync, readFileSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Clock, systemClock } from "../core/clock.ts";
import { LockError, StateDirBusyError } from "../core/errors.ts";
import { INVALID_UTC_INSTANT, Problems, UTC_INSTANT, isPlainRecord, pick } from "../core/plain-check.ts";
import { ensureDir, isErrno, writeFileAtomicUnsynced } from "./atomic-file.ts";
import { type OsLock, flockHoldersOf, openOsLock } from "./os-lock.ts";

/**
 * Ownership of a state dir by one live runtime (`agent run` / `drain`), SPEC §3–4.
 *
 * `runtime.lock` is a file the owner holds flock(2) on for its whole life, opened
 * close-on-exec so no child (a shell, an MCP server) inherits it. The kernel drops
 * the lock the instant its holder dies, however it died: there is no window between
 * "taken" and "owner known" in which a killed runtime leaves the session busy, no
 * staleness to wait out and no pid to judge.
 *
 * `runtime.owner.json` says who holds it, for messages only; it is written once the
 * lock is held, so a reader that finds the lock held but the record naming a pid that
 * does not hold it (the new owner has not written it yet, or it is corrupt) reports
 * the owner as unknown.
 *
 * The owner removes the lock file when it releases, so a finished session leaves
 * none. Because of that, a taker checks after flock that the file it locked is still
 * the one at the path (a releaser may have unlinked it meanwhile), and starts over if not.
 */
export interface RuntimeOwner {
  pid: number;
  host: string;
  startedAtUtc: string;
}

/** A held lock whose owner record is missing or unreadable: busy, but we cannot say who holds it. */
export const UNKNOWN_OWNER: Readonly<RuntimeOwner> = Object.freeze({ pid: 0, host: "unknown", startedAtUtc: "" });

export type OwnerRecord = RuntimeOwner;

const RECORD_FIELDS = ["pid", "host", "startedAtUtc"] as const;

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
  return problems.empty ? pick<OwnerRecord>(value, RECORD_FIELDS) : undefined;
}

export interface RuntimeLockOptions {
  /** How long to keep retrying a busy state dir; 0 (the default) fails at once. */
  waitMs?: number;
  /** Called (from a timer: it must not throw) when the lock file was removed or replaced while held. */
  onLost?: (error: Error) => void;
  clock?: Clock;
}

const RETRY_DELAY_MS = 100;
/** How often a holder checks its lock file is still the one at the path. */
const WATCH_MS = 2_000;

type Paths = { dir: string; lock: string; owner: string };

function pathsFor(stateDir: string): Paths {
  const dir = resolve(stateDir);
  return { dir, lock: join(dir, "runtime.lock"), owner: join(dir, "runtime.owner.json") };
}

export class RuntimeLock {
  readonly #stateDir: string;
  readonly #paths: Paths;
  readonly #owner: RuntimeOwner;
  readonly #onLost: ((error: Error) => void) | undefined;
  #file: OsLock | undefined;
  #lost: Error | undefined;
  #watch: ReturnType<typeof setInterval> | undefined;

  private constructor(stateDir: string, paths: Paths, owner: RuntimeOwner, file: OsLock, onLost?: (e: Error) => void) {
    this.#stateDir = stateDir;
    this.#paths = paths;
    this.#owner = owner;
    this.#file = file;
    this.#onLost = onLost;
    if (onLost) {
      this.#watch = setInterval(() => this.#check(), WATCH_MS);
      this.#watch.unref();
    }
  }

  static async acquire(stateDir: string, options: RuntimeLockOptions = {}): Promise<RuntimeLock> {
    const clock = options.clock ?? systemClock;
    const paths = pathsFor(stateDir);
    ensureDir(paths.dir);
    const deadline = Date.now() + (options.waitMs ?? 0);
    for (let attempt = 0; ; attempt += 1) {
      const file = take(paths);
      if (file) {
        const owner = { pid: process.pid, host: hostname(), startedAtUtc: clock.now().toISOString() };
        try {
          // Not fsynced: the record is for messages only, and the kernel drops the
          // lock with its holder, so after a crash no one reads it as the owner.
          writeFileAtomicUnsynced(paths.owner, `${JSON.stringify(owner, null, 2)}\n`);
        } catch (error) {
          file.close();
          throw new LockError(`could not record the owner of ${paths.lock}`, { cause: error });
        }
        return new RuntimeLock(stateDir, paths, owner, file, options.onLost);
      }
      const owner = holderOf(paths);
      // Freed since we tried (its owner ended, or a reader's probe let go): try again.
      if (owner === undefined && attempt < 5) continue;
      // Held, but its new owner has not written its record yet: give it a moment, so
      // the message can say who holds the session.
      if (owner?.pid === UNKNOWN_OWNER.pid && attempt < 10) {
        await sleep(20);
        continue;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new StateDirBusyError(
          stateDir,
          owner === undefined || owner.pid === UNKNOWN_OWNER.pid ? undefined : owner,
          "wait for it to finish, or pass --wait-lock to wait for it",
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
    if (this.#file) this.#check();
    if (this.#lost) {
      throw new LockError(
        `lost the runtime lock on ${this.#stateDir} (${this.#lost.message}); another runtime may own it now — stop and restart`,
        { cause: this.#lost },
      );
    }
    if (!this.#file) throw new LockError(`the runtime lock on ${this.#stateDir} was already released`);
  }

  async release(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    if (this.#watch) clearInterval(this.#watch);
    if (!file) return;
    try {
      // Removed while still held, so nobody sees a free lock beside our record; a
      // lost lock's files may be another runtime's now and are left alone.
      if (!this.#lost && this.#stillOurs(file)) {
        removeIfThere(this.#paths.owner);
        removeIfThere(this.#paths.lock);
      }
    } finally {
      file.close();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  #stillOurs(file: OsLock): boolean {
    try {
      return statSync(this.#paths.lock, { bigint: true }).ino === file.ino();
    } catch (error) {
      if (isErrno(error, "ENOENT")) return false;
      throw error;
    }
  }

  #check(): void {
    const file = this.#file;
    if (!file || this.#lost) return;
    let ours: boolean;
    try {
      ours = this.#stillOurs(file);
    } catch {
      return; // an unreadable state dir says nothing about who holds the lock
    }
    if (ours) return;
    this.#lost = new Error(`${this.#paths.lock} was removed or replaced`);
    this.#onLost?.(this.#lost);
  }
}

/**
 * The live owner of the state dir, or null when nobody holds its lock. A held lock
 * without a record naming its holder yields UNKNOWN_OWNER, never null. Creates nothing.
 */
export async function readRuntimeOwner(stateDir: string): Promise<RuntimeOwner | null> {
  const paths = pathsFor(stateDir);
  if (!existsSync(paths.lock)) return null;
  return holderOf(paths) ?? null;
}

/**
 * Whether a runtime holds the state dir, found without ever taking its lock,
 * not even for the instant readRuntimeOwner's probe takes it where /proc/locks
 * is missing (a follower must not make a starting runtime's take fail): there,
 * the owner record's pid is asked whether it is alive. A record naming another
 * host cannot be checked, and counts as held.
 */
export function runtimeHeldWithoutTaking(stateDir: string): boolean {
  const paths = pathsFor(stateDir);
  let ino: bigint;
  try {
    ino = statSync(paths.lock, { bigint: true }).ino;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    throw error;
  }
  const holders = flockHoldersOf(ino);
  if (holders) return holders.length > 0;
  const record = readOwnerRecord(paths.owner);
  if (!record) return false;
  if (record.host !== hostname()) return true;
  try {
    process.kill(record.pid, 0);
    return true;
  } catch (error) {
    return isErrno(error, "EPERM");
  }
}

/** Who holds the lock: undefined when free, UNKNOWN_OWNER when held by someone the record does not name. */
function holderOf(paths: Paths): RuntimeOwner | undefined {
  let ino: bigint;
  try {
    ino = statSync(paths.lock, { bigint: true }).ino;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const holders = flockHoldersOf(ino);
  if (holders ? holders.length === 0 : !heldByProbe(paths)) return undefined;
  const record = readOwnerRecord(paths.owner);
  // /proc/locks names the holding pid: a record naming another is a previous owner's.
  if (!record || (holders && !holders.includes(record.pid))) return { ...UNKNOWN_OWNER };
  return record;
}

/**
 * Where /proc/locks cannot be read (macOS): whether the lock is held, found by
 * taking and giving it. A taker that meets this brief hold finds the lock free
 * by the same rule and tries again.
 */
function heldByProbe(paths: Paths): boolean {
  let file: OsLock | undefined;
  try {
    file = openOsLock(paths.lock);
  } catch {
    return true; // cannot open it for writing: say held, as only the message suffers
  }
  if (!file) return true;
  try {
    return !file.tryTake();
  } finally {
    file.close();
  }
}

/** One attempt: the lock file held by this process, or undefined when another holds it. */
function take(paths: Paths): OsLock | undefined {
  for (;;) {
    const file = openLockFile(paths.lock);
    let taken: boolean;
    try {
      taken = file.tryTake();
    } catch (error) {
      file.close();
      throw new LockError(`could not take ${paths.lock}: ${(error as Error).message}`, { cause: error });
    }
    if (!taken) {
      file.close();
      return undefined;
    }
    // The previous owner may have unlinked the file between our open and our flock:
    // then we hold a lock nobody else can see. Start over on the file now at the path.
    let current: bigint | undefined;
    try {
      current = statSync(paths.lock, { bigint: true }).ino;
    } catch (error) {
      if (!isErrno(error, "ENOENT")) {
        file.close();
        throw error;
      }
    }
    if (current === file.ino()) return file;
    file.close();
  }
}

function openLockFile(path: string): OsLock {
  let file: OsLock | undefined;
  try {
    file = openOsLock(path);
  } catch (error) {
    // A lock directory left by an older version of agent: empty, and nothing holds it now.
    if (isErrno(error, "EISDIR")) {
      try {
        rmdirSync(path);
      } catch (cause) {
        throw new LockError(`${path} is a directory (an older agent's lock) and could not be removed; remove it if no agent runs there`, { cause });
      }
      return openLockFile(path);
    }
    throw new LockError(`could not open the runtime lock ${path}`, { cause: error });
  }
  if (!file) throw new LockError(`cannot lock ${path}: this platform has no flock(2), which the runtime lock needs`);
  return file;
}

/** The owner record, or undefined when missing or corrupt: an unreadable record must not stop the runtime. */
function readOwnerRecord(path: string): OwnerRecord | undefined {
  try {
    return checkOwnerRecord(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return undefined;
  }
}

function removeIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isErrno(error, "ENOENT")) throw new LockError(`could not remove ${path}`, { cause: error });
  }
}
