import { constants, fstatSync, openSync, readFileSync } from "node:fs";
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
 * - it belongs to the open file, which Bun opens close-on-exec: a child process
 *   never inherits it.
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
}

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
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
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
  };
}

/** The pids /proc/locks lists as holding a flock on inode `ino` (Linux; none elsewhere). */
function flockHolders(ino: number): number[] {
  let table: string;
  try {
    table = readFileSync("/proc/locks", "utf8");
  } catch {
    return [];
  }
  const pids: number[] = [];
  // "1: FLOCK  ADVISORY  WRITE 4242 fd:01:2170916 0 EOF"; waiters are marked "->".
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== "FLOCK") continue;
    const [pid, device] = [fields[4], fields[5]];
    if (device?.split(":")[2] === String(ino) && pid !== undefined) pids.push(Number(pid));
  }
  return pids;
}
