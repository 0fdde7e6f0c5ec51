import { type Libc, bindLibc, errnoCode } from "./libc.ts";

/** The directory argument that makes a name resolve like a plain path. */
export const AT_FDCWD = -100;

/**
 * rename(2) that never replaces an existing target, in one syscall: Linux's
 * renameat2 with RENAME_NOREPLACE (see libc.ts). The kernel looks and moves
 * atomically, so it replaces an lstat followed by a rename — a syscall less per
 * move, and no window between the look and the move.
 *
 * `fromDir`/`toDir` are directory descriptors the names resolve in (or AT_FDCWD).
 * Throws like `renameSync`: an error whose `code` is "EEXIST" when the target
 * exists, "ENOENT" when the source (or a directory) is missing. Returns false,
 * having done nothing, where it cannot be called (not Linux, a libc without
 * renameat2, a file system that refuses the flag); callers then look and rename.
 */
export function renameNoReplace(fromDir: number, from: string, toDir: number, to: string): boolean {
  const lib = bound();
  if (!lib) return false;
  const renameat2 = lib.call.renameat2 as Renameat2;
  if (renameat2(fromDir, cString(from), toDir, cString(to), RENAME_NOREPLACE) === 0) return true;
  const errno = lib.errno();
  const code = errnoCode(errno);
  if (code === "EINVAL" || code === "ENOSYS" || code === "ENOTSUP" || code === "EOPNOTSUPP") {
    // This kernel or file system cannot do it: never ask again in this process.
    libc = null;
    return false;
  }
  throw Object.assign(new Error(`${code}: rename '${from}' -> '${to}' without replacing failed`), {
    code,
    errno: -errno,
    syscall: "renameat2",
    path: from,
    dest: to,
  });
}

const RENAME_NOREPLACE = 1;

type Renameat2 = (fromDir: number, from: Uint8Array, toDir: number, to: Uint8Array, flags: number) => number;

let libc: Libc<"renameat2"> | null | undefined;

function bound(): Libc<"renameat2"> | null {
  if (libc === undefined) {
    libc = process.platform === "linux" ? bindLibc({ renameat2: { args: ["i32", "ptr", "i32", "ptr", "u32"], returns: "i32" } }) : null;
  }
  return libc;
}

function cString(value: string): Uint8Array {
  return Buffer.from(`${value}\0`, "utf8");
}
