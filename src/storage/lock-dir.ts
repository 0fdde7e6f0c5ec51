import * as fs from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import { Problems, isPlainRecord, pick } from "../core/plain-check.ts";
import { processStartTicks, isProcessAlive } from "./process-liveness.ts";

/**
 * The lock directory proper-lockfile manages, taken and given back by renaming a
 * directory this process keeps for the purpose (its "spare") instead of mkdir and
 * rmdir. Two reasons, both measured here:
 *
 * - cost: mkdir allocates a directory block and rmdir frees (and on a `discard`
 *   mount trims) it, together several times dearer than the fsync'ed rename a
 *   mailbox transition is; a rename of an existing directory allocates nothing;
 * - evidence: the spare holds `owner.json` (pid, host), so a waiter can tell a
 *   lock left by a dead process on this host and break it at once, instead of
 *   waiting for it to go stale.
 *
 * A rename onto an existing *empty* directory would replace it; the lock
 * directory is never empty (it holds owner.json), so the rename fails with
 * ENOTEMPTY/EEXIST while the lock is held, exactly like mkdir would.
 */
export interface LockOwner {
  pid: number;
  host: string;
  token: string;
  /** Start time in clock ticks (Linux), so a reused pid is not taken for the owner. */
  start?: string;
}

const OWNER_FIELDS = ["pid", "host", "token", "start"] as const;

/**
 * An owner file's content, checked by hand: every command that takes a lock reads
 * it, and zod would be most of a reading command's start-up. The same rules as a
 * zod schema are in lock-owner-schemas.ts; a test holds the two to agree.
 */
export function checkLockOwner(value: unknown): LockOwner | undefined {
  if (!isPlainRecord(value)) return undefined;
  const problems = new Problems();
  problems.unknownKeys(value, new Set(OWNER_FIELDS));
  problems.positiveInt(value, "pid");
  problems.string(value, "host");
  problems.string(value, "token");
  problems.optional(value, "start", (v, k) => problems.string(v, k));
  return problems.empty ? pick<LockOwner>(value, OWNER_FIELDS) : undefined;
}

const OWNER_FILE = "owner.json";
const HOST = hostname();

type Callback<T> = (error: NodeJS.ErrnoException | null, value?: T) => void;

/** Adapts a synchronous call to the callback shape proper-lockfile expects, results delivered on the next tick. */
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

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

export class LockDir {
  readonly #spare: string;
  readonly #token: string;
  #spareIno: number | undefined;

  /** The file-system calls proper-lockfile makes on this lock, done synchronously (each is one quick metadata syscall). */
  readonly fs;

  constructor(readonly path: string) {
    this.#token = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    this.#spare = join(sparesDirOf(path), this.#token);
    this.fs = {
      mkdir: viaSync((p: string) => (p === this.path ? this.take() : fs.mkdirSync(p, { mode: 0o700 }))),
      rmdir: viaSync((p: string) => (p === this.path ? this.give() : fs.rmdirSync(p))),
      rmdirSync: (p: string) => (p === this.path ? this.give() : fs.rmdirSync(p)),
      stat: viaSync((p: string) => fs.statSync(p)),
      utimes: viaSync((p: string, atime: Date, mtime: Date) => fs.utimesSync(p, atime, mtime)),
      realpath: viaSync((p: string) => fs.realpathSync(p)),
    };
  }

  /** Moves the spare into place; fails with EEXIST while anyone holds the lock. */
  take(): void {
    this.#ensureSpare();
    // A fresh mtime before it becomes the lock: the spare may have sat unused for
    // longer than the staleness threshold.
    const now = new Date();
    fs.utimesSync(this.#spare, now, now);
    try {
      fs.renameSync(this.#spare, this.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") throw errno("EEXIST", `${this.path} is held`);
      throw error;
    }
  }

  /** Moves the lock back to the spare, if it is still ours. */
  give(): void {
    let ino: number;
    try {
      ino = fs.lstatSync(this.path).ino;
    } catch (error) {
      throw errno("ENOTACQUIRED", `${this.path} is gone: the lock was broken while held`);
    }
    if (ino !== this.#spareIno) throw errno("ENOTACQUIRED", `${this.path} now belongs to another process`);
    fs.renameSync(this.path, this.#spare);
  }

  /**
   * Removes this process's spare (at exit). Never throws: it runs from an exit
   * handler, where an error would replace the command's own exit code and message
   * (a read-only state dir refuses this removal). A spare left behind is removed
   * by the next process that finds its owner dead.
   */
  dispose(): void {
    try {
      fs.rmSync(this.#spare, { recursive: true, force: true });
    } catch {
      // See above.
    }
  }

  #ensureSpare(): void {
    if (this.#spareIno !== undefined && fs.existsSync(this.#spare)) return;
    const spares = sparesDirOf(this.path);
    fs.mkdirSync(spares, { recursive: true, mode: 0o700 });
    if (this.#spareIno === undefined) removeDeadSpares(spares);
    fs.mkdirSync(this.#spare, { mode: 0o700 });
    const start = processStartTicks();
    const owner: LockOwner = { pid: process.pid, host: HOST, token: this.#token, ...(start === undefined ? {} : { start }) };
    fs.writeFileSync(join(this.#spare, OWNER_FILE), `${JSON.stringify(owner)}\n`, { mode: 0o600 });
    this.#spareIno = fs.lstatSync(this.#spare).ino;
  }
}

/** Where each process keeps its spare for `lockPath`: `<lockPath>.spares/<pid>-<token>/`. */
function sparesDirOf(lockPath: string): string {
  return join(dirname(lockPath), `${basename(lockPath)}.spares`);
}

/** Who holds `lockPath` by its owner file; undefined when unknown (gone, unreadable). */
export function readLockOwner(lockPath: string): LockOwner | undefined {
  try {
    return checkLockOwner(JSON.parse(fs.readFileSync(join(lockPath, OWNER_FILE), "utf8")));
  } catch {
    return undefined;
  }
}

/** Whether `owner` is a process of this host that no longer exists. */
export function isDeadHere(owner: LockOwner | undefined): boolean {
  if (!owner || owner.host !== HOST) return false;
  return !isProcessAlive(owner.pid, owner.start);
}

export function isLiveHere(owner: LockOwner | undefined): boolean {
  return owner !== undefined && owner.host === HOST && !isDeadHere(owner);
}

/** Spares of processes that died on this host: nothing will use them again. */
function removeDeadSpares(spares: string): void {
  for (const name of fs.readdirSync(spares)) {
    const path = join(spares, name);
    if (isDeadHere(readLockOwner(path))) fs.rmSync(path, { recursive: true, force: true });
  }
}

let broken = 0;

/** Takes a lock directory away from its (dead or stale) holder, atomically, then deletes it. */
export function removeLockDir(path: string): void {
  broken += 1;
  const grave = `${path}.broken-${process.pid}-${broken}`;
  try {
    fs.renameSync(path, grave);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  fs.rmSync(grave, { recursive: true, force: true });
}
