import type { Pointer } from "bun:ffi";
import { constants, fstatSync, openSync, readFileSync } from "node:fs";

/**
 * flock(2) through Bun's FFI — no child process, no native addon: libc is already
 * mapped into every process, and `dlopen` of it costs a fraction of a millisecond.
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

interface Libc {
  flock(fd: number, operation: number): number;
  errno(): number;
  /** The errno of "held by someone else". */
  wouldBlock: number;
}

let libc: Libc | null | undefined;

/** libc's flock and errno, or null where they cannot be reached. Loaded once. */
function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  const candidates =
    process.platform === "linux"
      ? { names: ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"], errno: "__errno_location", wouldBlock: 11 }
      : process.platform === "darwin"
        ? { names: ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"], errno: "__error", wouldBlock: 35 }
        : undefined;
  if (!candidates) return libc;
  // Required here, not imported at the top: a bundle hoists a static import of a
  // builtin to its start, and loading bun:ffi there cost every command (even
  // --version) several milliseconds.
  const { FFIType, dlopen, read } = require("bun:ffi") as typeof import("bun:ffi");
  for (const name of candidates.names) {
    try {
      const lib = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [candidates.errno]: { args: [], returns: FFIType.ptr },
      });
      const errnoAt = lib.symbols[candidates.errno] as () => Pointer | null;
      libc = {
        flock: lib.symbols.flock as (fd: number, operation: number) => number,
        errno: () => {
          const at = errnoAt();
          return at === null ? 0 : read.i32(at, 0);
        },
        wouldBlock: candidates.wouldBlock,
      };
      return libc;
    } catch {
      // Not this name: try the next.
    }
  }
  return libc;
}

/**
 * Opens (creating) the lock file at `path` for flock, or returns undefined when
 * this platform has no flock to call. Fails like `openSync` (EACCES, EROFS) when
 * the file cannot be created or opened for writing.
 */
export function openOsLock(path: string): OsLock | undefined {
  const lib = loadLibc();
  if (!lib) return undefined;
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
  return {
    tryTake() {
      if (lib.flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
      const errno = lib.errno();
      if (errno === lib.wouldBlock) return false;
      throw Object.assign(new Error(`flock(${path}) failed with errno ${errno}`), { code: `ERRNO_${errno}` });
    },
    give() {
      if (lib.flock(fd, LOCK_UN) !== 0) {
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
