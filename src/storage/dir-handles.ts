import { constants } from "node:fs";
import type { FsOps } from "./fs-ops.ts";

/**
 * Open descriptors of directories, kept between calls, so a durable move is a
 * renameat2 between two of them and an fsync of the second: no open and close of
 * the destination for each fsync (two syscalls of every move otherwise).
 *
 * A descriptor names the directory it was opened on, not its path. That is what
 * makes it safe to keep: the rename goes into the very directory the fsync then
 * commits, whatever happened to the path meanwhile. When that directory was
 * removed (a state dir cleaned up, a session deleted — by this process or another),
 * a rename through its descriptor fails with ENOENT, as it would through a path;
 * callers then `forget` both descriptors and retry once through fresh ones, so a
 * directory removed and made again at the same path is used again at once.
 *
 * Process-wide and bounded, on purpose: descriptors are a process's resource, a
 * store has no close() to give them back, and tests make thousands of stores in
 * one process. The least recently used is closed beyond `LIMIT`, unless it is
 * pinned: a move's fsync waits off the event loop, and the descriptor it syncs
 * must stay open until then (see `pinned`).
 */
const LIMIT = 64;
const open = new Map<string, number>();
/** Descriptors in use by an fsync under way, and how many: never closed until given back. */
const pins = new Map<number, number>();
/** Descriptors dropped while pinned: closed when the last pin goes. */
const closeWhenFree = new Set<number>();

/** The kept descriptor of the directory at `path`, opened (through `fs`) if need be; throws like openSync. */
export function dirHandle(path: string, fs: FsOps): number {
  const kept = open.get(path);
  if (kept !== undefined) {
    // Most recently used last: Map keeps insertion order.
    open.delete(path);
    open.set(path, kept);
    return kept;
  }
  const fd = fs.openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  open.set(path, fd);
  if (open.size > LIMIT) {
    const [oldest, oldestFd] = open.entries().next().value as [string, number];
    open.delete(oldest);
    release(oldestFd, fs);
  }
  return fd;
}

/** Closes the kept descriptor of `path`, if any: the next use opens the directory there now. */
export function forgetDirHandle(path: string, fs: FsOps): void {
  const fd = open.get(path);
  if (fd === undefined) return;
  open.delete(path);
  release(fd, fs);
}

/** Runs `use` with `fd` kept open until it settles, even if its path is forgotten or evicted meanwhile. */
export async function pinned<T>(fd: number, fs: FsOps, use: () => Promise<T>): Promise<T> {
  pin(fd);
  try {
    return await use();
  } finally {
    unpin(fd, fs);
  }
}

/** Keeps `fd` open, even if its path is forgotten or evicted, until as many `unpin`s. */
export function pin(fd: number): void {
  pins.set(fd, (pins.get(fd) ?? 0) + 1);
}

export function unpin(fd: number, fs: FsOps): void {
  const left = pins.get(fd)! - 1;
  if (left > 0) pins.set(fd, left);
  else {
    pins.delete(fd);
    if (closeWhenFree.delete(fd)) closeQuietly(fd, fs);
  }
}

function release(fd: number, fs: FsOps): void {
  if (pins.has(fd)) closeWhenFree.add(fd);
  else closeQuietly(fd, fs);
}

function closeQuietly(fd: number, fs: FsOps): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing is kept either way.
  }
}
