import { type Stats, closeSync, fchmodSync, fchownSync, fstatSync, fsyncSync, ftruncateSync, readdirSync, statSync, writeSync } from "node:fs";
import { fsyncOffLoop, isErrno } from "../storage/atomic-file.ts";
import { isProcessAlive } from "../storage/process-liveness.ts";
import { type AtCalls, O_CLOEXEC, O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } from "./at-calls.ts";

/**
 * Every temp file a write makes starts with this, then the writer's pid: what a
 * kill -9 leaves behind is recognisable (`git status`, `find -name`), and is
 * removed by the next write into the same directory once its writer is dead.
 */
export const TEMP_PREFIX = ".agent-write-";

/** A temp file younger than this is left alone even if its pid looks dead: its writer may be on another host. */
const STALE_TEMP_MS = 60_000;

let counter = 0;

/**
 * Replaces the file `name` in the directory `dir` with `data`, atomically: a
 * temp file in the same directory (created through the descriptor, never through
 * a path), fsynced, given the target's mode and owner, renamed over the target
 * within the directory, and the directory fsynced. A reader, or a crash at any
 * point, sees the old content or the new, never a mix or an empty file.
 *
 * `existing` is the target's stat (undefined for a new file). A file with several
 * hard links is written in place instead: a rename would cut this name off from
 * the others, which would keep the old content.
 */
export function writeAt(calls: AtCalls, dir: number, name: string, data: Uint8Array, existing: Stats | undefined): void {
  if (existing && existing.nlink > 1) {
    writeInPlace(calls, dir, name, data);
    return;
  }
  const temp = createTemp(calls, dir);
  try {
    try {
      fill(temp.fd, data, existing);
      fsyncSync(temp.fd);
    } finally {
      closeSync(temp.fd);
    }
    calls.renameat(dir, temp.name, dir, name);
  } catch (error) {
    removeTemp(calls, dir, temp.name);
    throw error;
  }
  // The rename is durable only once the directory's entry is.
  fsyncSync(dir);
}

/**
 * writeAt for a replacement that must wait until `ready` settles — the journal's
 * record of the content being replaced made durable — and then pass `check`
 * (the target still the file that was read). The temp file is written and
 * fsynced meanwhile, on the thread pool: the two syncs overlap, and the file
 * system commits them together, so waiting for the journal costs about nothing
 * beyond the write's own sync. Nothing is renamed unless both succeeded.
 */
export async function writeAtWhenReady(
  calls: AtCalls,
  dir: number,
  name: string,
  data: Uint8Array,
  existing: Stats | undefined,
  ready: Promise<void>,
  check: () => void,
): Promise<void> {
  if (existing && existing.nlink > 1) {
    await ready;
    check();
    writeInPlace(calls, dir, name, data);
    return;
  }
  const temp = createTemp(calls, dir);
  try {
    try {
      fill(temp.fd, data, existing);
      // Settled, not raced: the descriptor is closed only once its sync is over.
      const [synced, journaled] = await Promise.allSettled([fsyncOffLoop(temp.fd), ready]);
      if (journaled.status === "rejected") throw journaled.reason;
      if (synced.status === "rejected") throw synced.reason;
    } finally {
      closeSync(temp.fd);
    }
    check();
    calls.renameat(dir, temp.name, dir, name);
  } catch (error) {
    removeTemp(calls, dir, temp.name);
    throw error;
  }
  fsyncSync(dir);
}

/** Writes `data` into the new temp file `fd` and gives it the target's mode and owner (not synced). */
function fill(fd: number, data: Uint8Array, existing: Stats | undefined): void {
  writeAll(fd, data);
  if (existing) keepOwner(fd, existing);
  // Explicitly, not by the create's mode argument: the umask applies there, and a
  // variadic argument through FFI is not reliable on every ABI.
  fchmodSync(fd, existing ? existing.mode & 0o7777 : 0o666 & ~process.umask());
}

function removeTemp(calls: AtCalls, dir: number, temp: string): void {
  try {
    calls.unlinkat(dir, temp);
  } catch {
    // Renamed already, or never made: the first error is the one to report.
  }
}

function createTemp(calls: AtCalls, dir: number): { fd: number; name: string } {
  for (;;) {
    counter += 1;
    const name = `${TEMP_PREFIX}${process.pid}-${counter}.tmp`;
    try {
      return { fd: calls.openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600), name };
    } catch (error) {
      // Left by an earlier process with our pid: take the next number.
      if (!isErrno(error, "EEXIST")) throw error;
    }
  }
}

/** Ownership follows the file when this process may give it (root, or the same owner with a group it is in). */
function keepOwner(fd: number, existing: Stats): void {
  const own = fstatSync(fd);
  if (own.uid === existing.uid && own.gid === existing.gid) return;
  try {
    fchownSync(fd, existing.uid, existing.gid);
  } catch (error) {
    if (!isErrno(error, "EPERM")) throw error;
  }
}

function writeInPlace(calls: AtCalls, dir: number, name: string, data: Uint8Array): void {
  const fd = calls.openat(dir, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  try {
    writeAll(fd, data);
    ftruncateSync(fd, data.length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset, offset);
}

/**
 * Removes the temp files of dead writers from the directory open as `dir` (listed
 * through `listing`, a path naming it). Each directory once per process: the
 * listing costs what a few writes do.
 */
export function reapTemps(calls: AtCalls, dir: number, listing: string, seen: Set<string>, now = Date.now()): void {
  const identity = fstatSync(dir);
  const key = `${identity.dev}:${identity.ino}`;
  if (seen.has(key)) return;
  seen.add(key);
  let names: string[];
  try {
    names = readdirSync(listing);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const pid = Number(name.slice(TEMP_PREFIX.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid === process.pid || isProcessAlive(pid)) continue;
    try {
      if (now - statSync(`${listing}/${name}`).mtimeMs < STALE_TEMP_MS) continue;
      // Through the descriptor: if `listing` named another directory meanwhile, this removes nothing there.
      calls.unlinkat(dir, name);
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}
