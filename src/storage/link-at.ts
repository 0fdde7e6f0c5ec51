import { type Libc, bindLibc, errnoCode } from "./libc.ts";

/**
 * link(2) with the names resolved in directory descriptors (linkat, see libc.ts),
 * so a link made into a kept descriptor of a directory lands in the very
 * directory a later fsync of that descriptor commits (see dir-handles.ts), in
 * one syscall and without an open and close of the directory for the fsync.
 *
 * Throws like `linkSync`: an error whose `code` is "EEXIST" when the target
 * exists, "ENOENT" when the source is missing or the directory was removed.
 * Returns false, having done nothing, where it cannot be called (not Linux, a
 * libc without linkat); callers then link by path.
 */
export function linkAt(fromDir: number, from: string, toDir: number, to: string): boolean {
  const lib = bound();
  if (!lib) return false;
  const linkat = lib.call.linkat as Linkat;
  if (linkat(fromDir, cString(from), toDir, cString(to), 0) === 0) return true;
  const errno = lib.errno();
  const code = errnoCode(errno);
  throw Object.assign(new Error(`${code}: link '${from}' -> '${to}' failed`), { code, errno: -errno, syscall: "linkat", path: from, dest: to });
}

type Linkat = (fromDir: number, from: Uint8Array, toDir: number, to: Uint8Array, flags: number) => number;

let libc: Libc<"linkat"> | null | undefined;

function bound(): Libc<"linkat"> | null {
  if (libc === undefined) {
    libc = process.platform === "linux" ? bindLibc({ linkat: { args: ["i32", "ptr", "i32", "ptr", "i32"], returns: "i32" } }) : null;
  }
  return libc;
}

function cString(value: string): Uint8Array {
  return Buffer.from(`${value}\0`, "utf8");
}
