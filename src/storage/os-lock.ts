import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { type Libc, bindLibc } from "./libc.ts";

/**
 * flock(2) through Bun's FFI (see libc.ts).
 *
 * Why it beats the lock directory on every count that matters here:
 * - cost: taking and giving it is two syscalls that touch no file-system metadata
 *   (the lock directory is two renames, a timestamp update and stats, whose dirty
 *   metadata the next fsync must also commit);
 * - crash safety: the kernel drops the lock the moment its holder dies, whatever
 *   killed it (kill -9, a zombie that is never reaped), so there is no staleness to
 *   judge, no pid to check and no break to race;
 * - it belongs to the open file, opened close-on-exec (Bun does so by default; the
 *   flag is also asked for explicitly): a child process never inherits it, so a
 *   shell or MCP server outliving its runtime does not keep the lock.
 *
 * Where flock cannot be called (Windows, a libc not found), `openOsLock` returns
 * undefined and callers use the lock directory instead.
 */
export interface OsLock {
  /** Takes the lock if it is free; false when another open file holds it. */
  tryTake(): boolean;
  give(): void;
  /** The pids holding the lock now, as far as this host can tell (Linux: /proc/locks). */
  holders(): number[];
  /** The inode of the open file: differs from the path's once the file was removed or replaced. */
  ino(): bigint;
  /** Closes the file, which also gives the lock. */
  close(): void;
}

/** O_CLOEXEC by platform (node:fs does not export it). */
const O_CLOEXEC = process.platform === "darwin" ? 0x1000000 : process.platform === "linux" ? 0o2000000 : 0;

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
// The errno of "held by someone else": EWOULDBLOCK (EAGAIN on Linux).
const WOULD_BLOCK = process.platform === "darwin" ? 35 : 11;

let libc: Libc<"flock"> | null | undefined;

function flock(): Libc<"flock"> | null {
  if (libc === undefined) libc = bindLibc({ flock: { args: ["i32", "i32"], returns: "i32" } });
  return libc;
}

/**
 * Opens (creating) the lock file at `path` for flock, or returns undefined when
 * this platform has no flock to call. Fails like `openSync` (EACCES, EROFS) when
 * the file cannot be created or opened for writing.
 */
export function openOsLock(path: string): OsLock | undefined {
  const lib = flock();
  if (!lib) return undefined;
  const call = lib.call.flock as (fd: number, operation: number) => number;
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | O_CLOEXEC, 0o600);
  return {
    tryTake() {
      if (call(fd, LOCK_EX | LOCK_NB) === 0) return true;
      const errno = lib.errno();
      if (errno === WOULD_BLOCK) return false;
      throw Object.assign(new Error(`flock(${path}) failed with errno ${errno}`), { code: `ERRNO_${errno}` });
    },
    give() {
      if (call(fd, LOCK_UN) !== 0) {
        throw Object.assign(new Error(`flock(${path}, LOCK_UN) failed with errno ${lib.errno()}`), { code: "EUNLOCK" });
      }
    },
    holders() {
      return flockHolders(fstatSync(fd).ino);
    },
    ino() {
      return fstatSync(fd, { bigint: true }).ino;
    },
    close() {
      closeSync(fd);
    },
  };
}

/** The pids /proc/locks lists as holding a flock on inode `ino` (Linux; undefined where there is no /proc/locks). */
export function flockHoldersOf(ino: number | bigint): number[] | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  return parseHolders(table, String(ino));
}

function flockHolders(ino: number): number[] {
  return flockHoldersOf(ino) ?? [];
}

function parseHolders(table: string, ino: string): number[] {
  const pids: number[] = [];
  // "1: FLOCK  ADVISORY  WRITE 4242 fd:01:2170916 0 EOF"; waiters are marked "->".
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== "FLOCK") continue;
    const [pid, device] = [fields[4], fields[5]];
    if (device?.split(":")[2] === ino && pid !== undefined) pids.push(Number(pid));
  }
  return pids;
}
