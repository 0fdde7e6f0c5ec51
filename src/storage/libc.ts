import type { FFIFunction, Pointer } from "bun:ffi";
import { constants } from "node:os";

/**
 * Functions of the C library called through Bun's FFI — no child process, no native
 * addon: libc is already mapped into every process, and `dlopen` of it costs a
 * fraction of a millisecond. Used for the few calls node:fs lacks (flock(2),
 * renameat2(2)).
 */
export interface Libc<S extends string> {
  call: Record<S, (...args: never[]) => number>;
  /** The errno the last failed call left. */
  errno(): number;
}

/**
 * The errno values of this platform by number, as node names them ("EEXIST").
 * Where two names share a number, the first listed is node's own (EAGAIN, not
 * EWOULDBLOCK; ENOTSUP, not EOPNOTSUPP), which callers compare against.
 */
export function errnoCode(errno: number): string {
  if (!codes) {
    codes = new Map();
    for (const [name, value] of Object.entries(constants.errno)) if (!codes.has(value)) codes.set(value, name);
  }
  return codes.get(errno) ?? `ERRNO_${errno}`;
}

let codes: Map<number, string> | undefined;

const PLATFORMS: Partial<Record<NodeJS.Platform, { names: string[]; errno: string }>> = {
  linux: { names: ["libc.so.6", "libc.so", "libc.musl-x86_64.so.1", "libc.musl-aarch64.so.1"], errno: "__errno_location" },
  darwin: { names: ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"], errno: "__error" },
};

/**
 * Binds `symbols` in this platform's libc, or returns null where that cannot be
 * done (Windows, a libc not found, a function it does not have). Each caller binds
 * its own symbols once, so a libc without one (an old musl without renameat2)
 * still gives the others.
 */
export function bindLibc<S extends string>(symbols: Record<S, FFIFunction>): Libc<S> | null {
  const platform = PLATFORMS[process.platform];
  if (!platform) return null;
  // Required here, not imported at the top: a bundle hoists a static import of a
  // builtin to its start, and loading bun:ffi there cost every command (even
  // --version) several milliseconds.
  const { dlopen, read } = require("bun:ffi") as typeof import("bun:ffi");
  for (const name of platform.names) {
    try {
      const lib = dlopen(name, { ...symbols, [platform.errno]: { args: [], returns: "ptr" } });
      const errnoAt = lib.symbols[platform.errno] as unknown as () => Pointer | null;
      return {
        call: lib.symbols as unknown as Libc<S>["call"],
        errno: () => {
          const at = errnoAt();
          return at === null ? 0 : read.i32(at, 0);
        },
      };
    } catch {
      // Not this name, or a symbol missing from it: try the next.
    }
  }
  return null;
}
