import { constants } from "node:fs";
import { type Libc, bindLibc, errnoCode } from "../storage/libc.ts";

/**
 * The `*at` system calls node:fs lacks, through Bun's FFI (see storage/libc.ts):
 * each names a file relative to a directory descriptor, so a path is resolved
 * from a directory this process already holds, not from a string the file
 * system can change between a check and a use. Throws errors shaped like
 * node:fs's (`code`, `errno`, `syscall`, `path`).
 */
export interface AtCalls {
  /** Linux's openat2(2) with `resolve` flags; fails with ENOSYS where there is none (not Linux, a kernel before 5.6). */
  openat2(dir: number, path: string, flags: number, mode: number, resolve: number): number;
  openat(dir: number, name: string, flags: number, mode: number): number;
  mkdirat(dir: number, name: string, mode: number): void;
  /** The target of the symlink `name`, or undefined when `name` is not a symlink (or absent). */
  readlinkat(dir: number, name: string): string | undefined;
  renameat(fromDir: number, from: string, toDir: number, to: string): void;
  unlinkat(dir: number, name: string): void;
}

export const RESOLVE_NO_MAGICLINKS = 0x02;
/** Refuse any symlink on the path (ELOOP), not only those leading out. */
export const RESOLVE_NO_SYMLINKS = 0x04;
export const RESOLVE_BENEATH = 0x08;

/** Close-on-exec, which node's constants do not list: a descriptor of a workspace directory must never reach a child. */
export const O_CLOEXEC = process.platform === "darwin" ? 0x0100_0000 : 0o2_000_000;
/** macOS 11+: refuse a symlink in any component. Our walk opens one component at a time, so this only doubles O_NOFOLLOW. */
export const O_NOFOLLOW_ANY = process.platform === "darwin" ? 0x2000_0000 : 0;
export const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

// openat2 has the same number on every architecture that has it (added after the tables were unified).
const SYS_OPENAT2 = 437;
const PATH_MAX = 4096;

type Symbols = "syscall" | "openat" | "mkdirat" | "readlinkat" | "renameat" | "unlinkat";

let calls: AtCalls | null | undefined;

/** The calls, or null where there is no libc to call (Windows): callers then use paths. */
export function atCalls(): AtCalls | null {
  if (calls !== undefined) return calls;
  const lib = bindLibc({
    // openat and syscall are variadic in C; the fixed-argument call is how both ABIs we ship on (x86-64, Linux arm64)
    // pass them. Apple's arm64 passes variadic arguments on the stack, so the `mode` given to openat is not trusted
    // there: callers create with 0600 and fchmod.
    syscall: { args: ["i64", "i32", "ptr", "ptr", "u64"], returns: "i32" },
    openat: { args: ["i32", "ptr", "i32", "u32"], returns: "i32" },
    mkdirat: { args: ["i32", "ptr", "u32"], returns: "i32" },
    readlinkat: { args: ["i32", "ptr", "ptr", "u64"], returns: "i32" },
    renameat: { args: ["i32", "ptr", "i32", "ptr"], returns: "i32" },
    unlinkat: { args: ["i32", "ptr", "i32"], returns: "i32" },
  });
  calls = lib ? makeCalls(lib) : null;
  return calls;
}

function makeCalls(lib: Libc<Symbols>): AtCalls {
  const c = lib.call as unknown as Record<Symbols, (...args: unknown[]) => number>;
  const fail = (syscall: string, path: string): never => {
    const errno = lib.errno();
    const code = errnoCode(errno);
    const what = DESCRIPTIONS[code] ?? "failed";
    throw Object.assign(new Error(`${code}: ${what}, ${syscall} '${path}'`), { code, errno: -errno, syscall, path });
  };
  let hasOpenat2 = process.platform === "linux";
  const how = Buffer.alloc(24);
  const linkBuffer = Buffer.alloc(PATH_MAX);
  return {
    openat2(dir, path, flags, mode, resolve) {
      if (!hasOpenat2) throw Object.assign(new Error(`ENOSYS: openat2 '${path}': not on this system`), { code: "ENOSYS" });
      how.writeBigUInt64LE(BigInt(flags), 0);
      how.writeBigUInt64LE(BigInt(mode), 8);
      how.writeBigUInt64LE(BigInt(resolve), 16);
      const fd = c.syscall(SYS_OPENAT2, dir, cString(path), how, how.length);
      if (fd >= 0) return fd;
      // A kernel before 5.6 (or a seccomp filter refusing it): never ask again in this process.
      if (errnoCode(lib.errno()) === "ENOSYS") hasOpenat2 = false;
      return fail("openat2", path);
    },
    openat(dir, name, flags, mode) {
      const fd = c.openat(dir, cString(name), flags, mode);
      return fd >= 0 ? fd : fail("openat", name);
    },
    mkdirat(dir, name, mode) {
      if (c.mkdirat(dir, cString(name), mode) !== 0) fail("mkdirat", name);
    },
    readlinkat(dir, name) {
      const length = c.readlinkat(dir, cString(name), linkBuffer, linkBuffer.length);
      if (length >= 0) return linkBuffer.toString("utf8", 0, length);
      const code = errnoCode(lib.errno());
      if (code === "EINVAL" || code === "ENOENT") return undefined;
      return fail("readlinkat", name);
    },
    renameat(fromDir, from, toDir, to) {
      if (c.renameat(fromDir, cString(from), toDir, cString(to)) !== 0) fail("renameat", to);
    },
    unlinkat(dir, name) {
      if (c.unlinkat(dir, cString(name), 0) !== 0) fail("unlinkat", name);
    },
  };
}

/** As node:fs words its errors, for the ones a file tool meets. */
const DESCRIPTIONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EEXIST: "file already exists",
  ELOOP: "too many levels of symbolic links",
  ENOSPC: "no space left on device",
  EROFS: "read-only file system",
};

function cString(value: string): Uint8Array {
  return Buffer.from(`${value}\0`, "utf8");
}
