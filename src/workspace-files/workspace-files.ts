import { type Stats, closeSync, fstatSync, fsyncSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, normalize, relative, resolve } from "node:path";
import type { PathFence } from "../core/tool.ts";
import { AgentError } from "../core/errors.ts";
import { isErrno, writeFileAtomic } from "../storage/atomic-file.ts";
import { WorkspaceEscapeError, resolveInWorkspace } from "../security/workspace-path.ts";
import { type AtCalls, O_CLOEXEC, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, atCalls } from "./at-calls.ts";
import { reapTemps, writeAt, writeAtWhenReady } from "./atomic-write.ts";
import { addedRootOf } from "./added-dirs.ts";
import { assertGuardedLanding } from "./guarded-landing.ts";
import { type Root, SymlinkOnPathError, components, openBeneath, openRoot, relativeTo } from "./open-beneath.ts";

/** Where a file tool works: the workspace, and the fence around the agent's state in it. */
export interface FileScope {
  workspace: string;
  fence?: PathFence;
  /** `--add-dir` directories (real, absolute): a path in one is opened beneath it (added-dirs.ts). */
  addDirs?: readonly string[];
  /** Symlinks on a path: followed beneath the workspace (the default), or refused (a replay: guarded-writer.ts). */
  links?: "follow" | "refuse";
  /**
   * Whether a guarded file (the fence's guardedWrite), by its real path, was named
   * by a person for this write. Unset: the caller's permission check approved the
   * path as written, and only a write landing elsewhere than that is refused.
   */
  approvedGuarded?: (absolute: string) => boolean;
}

export interface WorkspaceFilesOptions {
  /** "walk" resolves without openat2 even where it exists (how other systems resolve; for tests). */
  resolver?: "kernel" | "walk";
}

export interface FileRead {
  /** Null for a directory. */
  bytes: Buffer | null;
  /** The path as the model should see it: relative to the workspace, symlinks resolved. */
  display: string;
  stat?: Stats;
}

export interface FileWrite {
  display: string;
  created: boolean;
}

/**
 * Turns a file's bytes (undefined: none yet) into its new bytes, possibly
 * waiting; throws to change nothing. `ready`, when given, must settle before the
 * file is replaced (the journal's record of it made durable): the write prepares
 * and syncs its temp file meanwhile, and a rejection changes nothing.
 */
export type AsyncChange = (display: string, bytes: Buffer | undefined) => Promise<{ data: Uint8Array; ready?: Promise<void> }>;

/** Turns a file's bytes into its new bytes; throws to change nothing. */
export type Change = (bytes: Buffer, display: string) => Uint8Array;

/**
 * The one door of file tools to the user's files. Every path is resolved and
 * opened beneath a descriptor of the workspace (open-beneath.ts), so the file
 * checked is the file used; every write replaces the file atomically
 * (atomic-write.ts). See docs/files.md.
 */
export class WorkspaceFiles {
  readonly #calls: AtCalls | null;
  readonly #resolver: "kernel" | "walk";
  /** Directories whose leftover temp files this process has looked for. */
  readonly #reaped = new Set<string>();

  constructor(options: WorkspaceFilesOptions = {}) {
    this.#calls = atCalls();
    this.#resolver = options.resolver ?? (process.platform === "linux" ? "kernel" : "walk");
  }

  read(scope: FileScope, path: string): FileRead {
    const added = addedRootOf(scope, path);
    if (added) {
      const read = this.read(added.scope, added.path);
      return { ...read, display: added.shown(read.display) };
    }
    scope.fence?.assertOutsideState(path);
    if (!this.#calls) return readByPath(scope, path);
    return this.#withRoot(scope, (root) => {
      const fd = openBeneath(root, path, O_RDONLY | O_NONBLOCK);
      try {
        const display = this.#checked(root, scope, fd, undefined, path);
        const stat = fstatSync(fd);
        return { bytes: stat.isDirectory() ? null : readFileSync(fd), display, stat };
      } finally {
        closeSync(fd);
      }
    });
  }

  /** Creates or replaces `path` with `data`, making missing directories. */
  write(scope: FileScope, path: string, data: Uint8Array): FileWrite {
    const added = addedRootOf(scope, path);
    if (added) {
      const written = this.write(added.scope, added.path, data);
      return { ...written, display: added.shown(written.display) };
    }
    scope.fence?.assertOutsideState(path);
    if (!this.#calls) return writeByPath(scope, path, data);
    return this.#withRoot(scope, (root) => {
      const target = this.#locate(root, scope, path, true);
      try {
        if (target.fd !== undefined) closeSync(target.fd);
        assertGuardedLanding(root, scope, target.display, path);
        this.#replace(root, target, data);
        return { display: target.display, created: target.stat === undefined };
      } finally {
        closeSync(target.dir);
      }
    });
  }

  /** Reads the existing file `path` and replaces it with what `change` makes of it, through the same descriptors. */
  edit(scope: FileScope, path: string, change: Change): FileWrite {
    const added = addedRootOf(scope, path);
    if (added) {
      const edited = this.edit(added.scope, added.path, (bytes, display) => change(bytes, added.shown(display)));
      return { ...edited, display: added.shown(edited.display) };
    }
    scope.fence?.assertOutsideState(path);
    if (!this.#calls) return editByPath(scope, path, change);
    return this.#withRoot(scope, (root) => {
      const target = this.#locate(root, scope, path, false);
      try {
        if (target.fd === undefined) {
          throw Object.assign(new Error(`ENOENT: no such file or directory, ${target.display}`), { code: "ENOENT" });
        }
        let bytes: Buffer;
        try {
          assertGuardedLanding(root, scope, target.display, path);
          bytes = readFileSync(target.fd);
        } finally {
          closeSync(target.fd);
        }
        this.#replace(root, target, change(bytes, target.display));
        return { display: target.display, created: false };
      } finally {
        closeSync(target.dir);
      }
    });
  }

  /**
   * Removes the file `path`; false when there was none. A symlink there is
   * removed itself, never followed; a directory is refused (EISDIR). The
   * directory it is in is opened beneath the workspace as for a write, and a
   * guarded file is removed only on the terms it is written on.
   */
  remove(scope: FileScope, path: string): { display: string; removed: boolean } {
    const added = addedRootOf(scope, path);
    if (added) {
      const removed = this.remove(added.scope, added.path);
      return { ...removed, display: added.shown(removed.display) };
    }
    scope.fence?.assertOutsideState(path);
    if (!this.#calls) return removeByPath(scope, path);
    return this.#withRoot(scope, (root) => {
      const parts = components(relativeTo(root, path, path));
      const name = parts.pop();
      if (name === undefined || name === "..") throw new Error(`${path} is a directory; give a file path`);
      let dir: number;
      try {
        dir = openBeneath(root, parts.join("/"), O_RDONLY | O_DIRECTORY, false, path);
      } catch (error) {
        if (isErrno(error, "ENOENT")) return { display: normalize(relativeTo(root, path, path)), removed: false };
        throw error;
      }
      try {
        const display = this.#checked(root, scope, dir, name, path);
        assertGuardedLanding(root, scope, display, path);
        try {
          root.calls.unlinkat(dir, name);
        } catch (error) {
          if (isErrno(error, "ENOENT")) return { display, removed: false };
          throw error;
        }
        fsyncSync(dir);
        return { display, removed: true };
      } finally {
        closeSync(dir);
      }
    });
  }

  /**
   * For a search that lists files by path and then reads them: opens each listed
   * file beneath the workspace descriptor (undefined for one a symlink now leads
   * out of), or undefined where no libc can be called. `close` it after the search.
   */
  searchOpener(scope: FileScope): { open(absolute: string): number | undefined; close(): void } | undefined {
    if (!this.#calls) return undefined;
    const root = openRoot(scope.workspace, this.#calls, this.#resolver);
    return {
      open: (absolute) => {
        let fd: number;
        try {
          fd = openBeneath(root, absolute, O_RDONLY | O_NONBLOCK);
        } catch (error) {
          if (error instanceof WorkspaceEscapeError) return undefined;
          throw error;
        }
        // Led into the state root by a link swapped in after the listing: skipped like a file gone.
        const real = scope.fence ? listingOf(fd, undefined) : undefined;
        if (real !== undefined && scope.fence?.inStateRoot(real)) {
          closeSync(fd);
          return undefined;
        }
        return fd;
      },
      close: () => root.close(),
    };
  }

  /**
   * Replaces `path` (created, with missing directories, when `mustExist` is false)
   * with what `make` returns for its current bytes (undefined: no file). `make` may
   * wait (for the journal); if the file is replaced by someone else meanwhile, the
   * write is refused with FileChangedMeanwhileError rather than lose their change.
   */
  async replace(scope: FileScope, path: string, mustExist: boolean, make: AsyncChange): Promise<FileWrite & { stat?: Stats }> {
    const added = addedRootOf(scope, path);
    if (added) {
      const replaced = await this.replace(added.scope, added.path, mustExist, (display, bytes) => make(added.shown(display), bytes));
      return { ...replaced, display: added.shown(replaced.display) };
    }
    scope.fence?.assertOutsideState(path);
    if (!this.#calls) return replaceByPath(scope, path, mustExist, make);
    const root = openRoot(scope.workspace, this.#calls, this.#resolver, scope.links);
    try {
      const target = this.#locate(root, scope, path, !mustExist);
      try {
        if (target.fd === undefined && mustExist) {
          throw Object.assign(new Error(`ENOENT: no such file or directory, ${target.display}`), { code: "ENOENT" });
        }
        let current: Buffer | undefined;
        if (target.fd !== undefined) {
          try {
            assertGuardedLanding(root, scope, target.display, path);
            current = target.stat?.isFile() ? readFileSync(target.fd) : undefined;
          } finally {
            closeSync(target.fd);
          }
        } else {
          assertGuardedLanding(root, scope, target.display, path);
        }
        // Refused before `make` runs: a directory is no file to journal a change of.
        this.#assertWritable(target);
        const { data, ready } = await make(target.display, current);
        try {
          this.#reap(root, target);
          await writeAtWhenReady(root.calls, target.dir, target.name, data, target.stat, ready ?? Promise.resolve(), () => {
            if (!sameFile(root.calls, target.dir, target.name, target.stat)) throw new FileChangedMeanwhileError(target.display);
          });
        } finally {
          // Whatever became of the write, the journal's work is over before the call is (its failure, if the write waited for it, was thrown there).
          await ready?.catch(() => {});
        }
        const stat = statSync(resolve(root.real, target.display), { throwIfNoEntry: false });
        return { display: target.display, created: target.stat === undefined, ...(stat ? { stat } : {}) };
      } finally {
        closeSync(target.dir);
      }
    } finally {
      root.close();
    }
  }

  /** Checks that `target` can be replaced by a file tool: a regular file, or nothing yet. */
  #assertWritable(target: Located): void {
    if (target.stat?.isDirectory()) throw new Error(`${target.display} is a directory; give a file path`);
    if (target.stat && !target.stat.isFile()) throw new Error(`${target.display} is not a regular file; file tools write only files`);
  }

  #replace(root: Root, target: Located, data: Uint8Array): void {
    this.#assertWritable(target);
    this.#reap(root, target);
    writeAt(root.calls, target.dir, target.name, data, target.stat);
  }

  #reap(root: Root, target: Located): void {
    reapTemps(root.calls, target.dir, listingOf(target.dir, dirname(resolve(root.real, target.display))), this.#reaped);
  }

  /**
   * The directory `path`'s file is in (open), its name there and, when it exists,
   * a read descriptor of it and its stat. A symlink in the last component is
   * followed to its destination (beneath the root), so a write replaces the file
   * the link points to and the link stays.
   */
  #locate(root: Root, scope: FileScope, path: string, createDirs: boolean): Located {
    let rel = relativeTo(root, path, path);
    for (let hops = 0; hops <= 40; hops += 1) {
      const parts = components(rel);
      const name = parts.pop();
      if (name === undefined || name === ".." || /\/\.?$/.test(rel)) throw new Error(`${path} is a directory; give a file path`);
      const parent = parts.join("/");
      const dir = openBeneath(root, parent, O_RDONLY | O_DIRECTORY, createDirs, path);
      try {
        const display = this.#checked(root, scope, dir, name, path);
        let fd: number;
        try {
          fd = root.calls.openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
        } catch (error) {
          if (isErrno(error, "ENOENT")) return { dir, name, display };
          const link = root.calls.readlinkat(dir, name);
          if (link === undefined) throw error;
          if (root.links === "refuse") throw new SymlinkOnPathError(path, display, link);
          closeSync(dir);
          // The link's target, resolved from the link's directory; an absolute one only if inside.
          rel = isAbsolute(link) ? relativeTo(root, link, path) : parent === "" ? link : `${parent}/${link}`;
          continue;
        }
        return { dir, name, display, fd, stat: fstatSync(fd) };
      } catch (error) {
        closeQuietly(dir);
        throw error;
      }
    }
    throw Object.assign(new Error(`ELOOP: too many levels of symbolic links in '${path}'`), { code: "ELOOP" });
  }

  /**
   * Where the descriptor `fd` (with `name` below it) really is, relative to the
   * root; and the fence asked again about that place, which no later rename of a
   * path can change for this descriptor.
   */
  #checked(root: Root, scope: FileScope, fd: number, name: string | undefined, requested: string): string {
    const real = listingOf(fd, undefined);
    const absolute = real === undefined ? resolve(root.real, relativeTo(root, requested, requested)) : name === undefined ? real : `${real}/${name}`;
    // The descriptor's own place is its real path: resolving that path again would only ask where it leads now.
    if (real !== undefined) scope.fence?.assertOutsideState(absolute, name === undefined ? real : undefined);
    const rel = relative(root.real, absolute);
    return rel === "" ? "." : normalize(rel);
  }

  #withRoot<T>(scope: FileScope, use: (root: Root) => T): T {
    const root = openRoot(scope.workspace, this.#calls!, this.#resolver, scope.links);
    try {
      return use(root);
    } finally {
      root.close();
    }
  }
}

interface Located {
  dir: number;
  name: string;
  display: string;
  fd?: number;
  stat?: Stats;
}

/** The path the descriptor `fd` names now (Linux), else `fallback`. */
function listingOf<T extends string | undefined>(fd: number, fallback: T): string | T {
  if (process.platform !== "linux") return fallback;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return fallback;
  }
}

/** Whether `name` in `dir` is still the file `before` described (or still absent). */
function sameFile(calls: AtCalls, dir: number, name: string, before: Stats | undefined): boolean {
  let fd: number;
  try {
    fd = calls.openat(dir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return before === undefined;
    // A symlink (followed at locate time) or a special file: nothing to compare here.
    return true;
  }
  try {
    const now = fstatSync(fd);
    return before !== undefined && now.ino === before.ino && now.size === before.size && now.mtimeMs === before.mtimeMs;
  } finally {
    closeSync(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already.
  }
}

// Where no libc can be called (Windows): the path is checked, then used. Not
// race-free, as docs/files.md says; the write is still temp + rename.

function readByPath(scope: FileScope, path: string): FileRead {
  const { absolute, display } = resolveInWorkspace(scope.workspace, path, scope.fence);
  const stat = statSync(absolute);
  return { bytes: stat.isDirectory() ? null : readFileSync(absolute), display, stat };
}

function writeByPath(scope: FileScope, path: string, data: Uint8Array): FileWrite {
  const { absolute, display } = resolveInWorkspace(scope.workspace, path, scope.fence);
  const stat = statSync(absolute, { throwIfNoEntry: false });
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileAtomic(absolute, data);
  return { display, created: stat === undefined };
}

async function replaceByPath(scope: FileScope, path: string, mustExist: boolean, make: AsyncChange): Promise<FileWrite & { stat?: Stats }> {
  const { absolute, display } = resolveInWorkspace(scope.workspace, path, scope.fence);
  const before = statSync(absolute, { throwIfNoEntry: false });
  if (!before && mustExist) throw Object.assign(new Error(`ENOENT: no such file or directory, ${display}`), { code: "ENOENT" });
  const { data, ready } = await make(display, before?.isFile() ? readFileSync(absolute) : undefined);
  await ready;
  const now = statSync(absolute, { throwIfNoEntry: false });
  if (now?.mtimeMs !== before?.mtimeMs || now?.size !== before?.size) throw new FileChangedMeanwhileError(display);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileAtomic(absolute, data);
  const stat = statSync(absolute, { throwIfNoEntry: false });
  return { display, created: before === undefined, ...(stat ? { stat } : {}) };
}

function removeByPath(scope: FileScope, path: string): { display: string; removed: boolean } {
  // The directory resolved, the name not: a symlink there is removed, not what it points to.
  const dir = resolveInWorkspace(scope.workspace, dirname(path), scope.fence);
  const absolute = resolve(dir.absolute, basename(path));
  const display = normalize(relative(realpathSync(scope.workspace), absolute));
  try {
    unlinkSync(absolute);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { display, removed: false };
    throw error;
  }
  return { display, removed: true };
}

function editByPath(scope: FileScope, path: string, change: Change): FileWrite {
  const { absolute, display } = resolveInWorkspace(scope.workspace, path, scope.fence);
  writeFileAtomic(absolute, change(readFileSync(absolute), display));
  return { display, created: false };
}

/** The file was replaced by another writer between reading it and writing it: nothing was written. */
export class FileChangedMeanwhileError extends AgentError {
  readonly code = "FILE_CHANGED_MEANWHILE";
  readonly category = "usage" as const;
  constructor(readonly display: string) {
    super(`${display} was changed by someone else while this write was being prepared; nothing was written: read it again and redo the change`);
  }
}
