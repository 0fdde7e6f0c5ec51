import { constants, fsync, mkdir, open, writeFile } from "node:fs";
import { dirname } from "node:path";
import { type FsOps, realFs } from "./fs-ops.ts";

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

export function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/** Whether anything (file, directory, symlink) is at `path`. */
export function pathExists(path: string, fs: FsOps = realFs): boolean {
  // No ENOENT thrown and caught: a claim and an ack each ask about a path that is
  // usually absent, and building the error cost more than the syscall.
  return fs.lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}

/** The names in a directory, or none when it does not exist (yet). */
export function namesIn(path: string, fs: FsOps = realFs): string[] {
  try {
    return fs.readdirSync(path);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
}

export function ensureDir(path: string, fs: FsOps = realFs): void {
  fs.mkdirSync(path, { recursive: true, mode: DIR_MODE });
}

/**
 * ensureDir where creates cost least (see openWhereCheap). A store given other
 * calls (a test's) runs their mkdirSync.
 */
export async function ensureDirWhereCheap(path: string, fs: FsOps = realFs, costs: CreateCosts = creates): Promise<void> {
  if (fs !== realFs) return ensureDir(path, fs);
  if (!costs.offLoop()) {
    const started = performance.now();
    // Measured only when it made something: a directory found costs no inode.
    if (fs.mkdirSync(path, { recursive: true, mode: DIR_MODE }) !== undefined) costs.measured(performance.now() - started);
    return;
  }
  await new Promise<void>((resolve, reject) => mkdir(path, { recursive: true, mode: DIR_MODE }, (error) => (error ? reject(error) : resolve())));
}

/**
 * open, for an open that may create the file, where creates cost least. Allocating
 * an inode is kernel work whose cost swings: on this machine's ext4 (no journal)
 * each create scans past the inodes deleted in the last minutes, 0.01 ms after a
 * quiet spell, ~1 ms after a few thousand deletes. On the event loop, 32 spawns'
 * creates then stalled every other agent for up to a third of a run (perf:
 * find_inode_bit → recently_deleted); on the thread pool, a cheap create waits
 * behind the agents' fsyncs instead (a team of 32 on tmpfs: ~15 ms a run). So a
 * create runs on the loop while creates are cheap, on the pool once they are
 * not (see CreateCosts). A store given other calls (a test's) runs their openSync.
 */
export async function openWhereCheap(
  path: string,
  flags: number | string,
  mode: number,
  fs: FsOps = realFs,
  costs: CreateCosts = creates,
): Promise<number> {
  if (fs !== realFs) return fs.openSync(path, flags, mode);
  if (!costs.offLoop()) {
    const started = performance.now();
    const fd = fs.openSync(path, flags, mode);
    costs.measured(performance.now() - started);
    return fd;
  }
  return new Promise((resolve, reject) => open(path, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd))));
}

/**
 * What a create on the event loop has cost lately, as a moving average, and so
 * where the next one runs. While they are slow, one in PROBE_EVERY still runs on
 * the loop, to notice when they are cheap again.
 */
export class CreateCosts {
  static readonly SLOW_MS = 0.1;
  static readonly PROBE_EVERY = 16;
  #averageMs = 0;
  #sinceProbe = 0;

  offLoop(): boolean {
    if (this.#averageMs <= CreateCosts.SLOW_MS) return false;
    this.#sinceProbe += 1;
    if (this.#sinceProbe < CreateCosts.PROBE_EVERY) return true;
    this.#sinceProbe = 0;
    return false;
  }

  measured(ms: number): void {
    this.#averageMs = this.#averageMs * 0.75 + ms * 0.25;
  }
}

const creates = new CreateCosts();

/** Makes the directory's entries (a create, rename or unlink in it) durable. */
export function fsyncDir(path: string, fs: FsOps = realFs): void {
  const fd = fs.openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * fsync on the thread pool: the event loop runs the other agents meanwhile (a
 * synchronous fsync stalls every one of them for the disk's latency), and the
 * fsyncs of several files at once share the file system's journal commit — 32
 * at once take about what 5 one after another do on this machine's disk. The
 * caller awaits it before it acknowledges or acts on what it wrote.
 */
export function fsyncOffLoop(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * The fsync a store awaits: off the event loop with the real calls; a store given
 * other calls (a test's, failing or dying at a chosen one) runs their fsyncSync.
 */
export async function awaitFsync(fd: number, fs: FsOps = realFs): Promise<void> {
  if (fs === realFs) await fsyncOffLoop(fd);
  else fs.fsyncSync(fd);
}

/**
 * fsyncDir, off the event loop (see awaitFsync). Asked for a directory whose
 * fsync is already waiting to start, it joins that one: every change made
 * before the ask is made durable by an fsync begun after it, and 32 agents
 * creating their files in one directory at once pay a few fsyncs, not 32 in a
 * row on the thread pool's two threads. Given `fd`, a descriptor of the
 * directory the changes were made in (see dir-handles.ts), it fsyncs that one,
 * which the caller keeps open until this settles: no open and close of `path`.
 */
export function fsyncDirOffLoop(path: string, fs: FsOps = realFs, fd?: number): Promise<void> {
  if (fs !== realFs) return fd === undefined ? fsyncDirNow(path, fs) : awaitFsync(fd, fs);
  // A descriptor names one directory, a path whichever is there now: only asks for the same one join.
  const key = fd === undefined ? path : `${path}\0${fd}`;
  const pending = dirSyncs.get(key);
  if (pending?.waiting) return pending.waiting;
  const start = async (): Promise<void> => {
    const entry = dirSyncs.get(key)!;
    entry.waiting = undefined;
    try {
      await (fd === undefined ? fsyncDirNow(path, fs) : fsyncOffLoop(fd));
    } finally {
      if (entry.waiting === undefined) dirSyncs.delete(key);
    }
  };
  if (pending) {
    // One under way began before this ask, maybe before its change: the next one starts after it.
    const waiting = pending.running.then(start, start);
    pending.waiting = waiting;
    pending.running = waiting;
    return waiting;
  }
  const entry: DirSync = { running: Promise.resolve(), waiting: undefined };
  dirSyncs.set(key, entry);
  entry.running = start();
  return entry.running;
}

interface DirSync {
  /** The last fsync of the directory begun or queued. */
  running: Promise<void>;
  /** A queued fsync not begun yet, which a new ask joins. */
  waiting: Promise<void> | undefined;
}

/** The directories of this process being fsynced (see fsyncDirOffLoop). */
const dirSyncs = new Map<string, DirSync>();

async function fsyncDirNow(path: string, fs: FsOps): Promise<void> {
  const fd = fs.openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await awaitFsync(fd, fs);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * writeNewFileSynced off the event loop, in one task of the thread pool: the
 * file is opened O_SYNC, so its write returns once the data and the inode are
 * on the disk, as a write then an fsync would (open(2)). One hop to the pool
 * and back, not one for the fsync and one for the create (see openWhereCheap):
 * each hop costs the loop a wake-up and a poll. A store given other calls (a
 * test's, failing or dying at a chosen one) runs writeNewFileSynced with them.
 */
export async function writeNewFileDurably(path: string, data: string | Uint8Array, fs: FsOps = realFs): Promise<void> {
  if (fs !== realFs) return writeNewFileSynced(path, data, fs);
  const flag = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_SYNC;
  // A numeric flag, as open(2) takes it (node:fs accepts one; its type says string).
  const options = { flag: flag as unknown as string, mode: FILE_MODE };
  await new Promise<void>((resolve, reject) => writeFile(path, data, options, (error) => (error ? reject(error) : resolve())));
}

/** Creates `path` (which must not exist), writes `data` and fsyncs it. */
export function writeNewFileSynced(path: string, data: string | Uint8Array, fs: FsOps = realFs): void {
  const fd = fs.openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
  try {
    writeAll(fd, data, fs);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function writeAll(fd: number, data: string | Uint8Array, fs: FsOps): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset);
}

export function unlinkQuietly(path: string, fs: FsOps = realFs): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // Cleanup after an earlier failure: the original error is the one that matters.
  }
}

let tempCounter = 0;

/** A temp name beside `target` that no other writer in any process will pick. */
export function tempPathFor(target: string): string {
  tempCounter += 1;
  return `${dirname(target)}/.${process.pid}.${tempCounter}.${Date.now().toString(36)}.tmp`;
}

/**
 * Replaces `target` atomically: temp file in the same directory, fsync, rename,
 * fsync the directory. A reader sees the old content or the new, never a mix,
 * and after a crash the file is one or the other. On failure no temp file remains.
 */
export function writeFileAtomic(target: string, data: string | Uint8Array, fs: FsOps = realFs): void {
  const temp = tempPathFor(target);
  try {
    writeNewFileSynced(temp, data, fs);
    fs.renameSync(temp, target);
  } catch (error) {
    unlinkQuietly(temp, fs);
    throw error;
  }
  fsyncDir(dirname(target), fs);
}

/**
 * Replaces `target` atomically without making it durable: a reader sees the old
 * content or the new, but after a power loss the file may be either, or empty.
 * Only for records nothing depends on after a crash (a lock's owner, kept for messages).
 */
export function writeFileAtomicUnsynced(target: string, data: string | Uint8Array, fs: FsOps = realFs): void {
  const temp = tempPathFor(target);
  try {
    const fd = fs.openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
    try {
      writeAll(fd, data, fs);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, target);
  } catch (error) {
    unlinkQuietly(temp, fs);
    throw error;
  }
}

/** writeFileAtomic with its two fsyncs off the event loop (see fsyncOffLoop). */
export async function writeFileAtomicOffLoop(target: string, data: string | Uint8Array, fs: FsOps = realFs): Promise<void> {
  const temp = tempPathFor(target);
  try {
    await writeNewFileDurably(temp, data, fs);
    fs.renameSync(temp, target);
  } catch (error) {
    unlinkQuietly(temp, fs);
    throw error;
  }
  await fsyncDirOffLoop(dirname(target), fs);
}
