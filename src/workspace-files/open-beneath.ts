import { closeSync, openSync, realpathSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { isErrno } from "../storage/atomic-file.ts";
import { AgentError } from "../core/errors.ts";
import { WorkspaceEscapeError, realPathOf } from "../security/workspace-path.ts";
import {
  type AtCalls,
  O_CLOEXEC,
  O_DIRECTORY,
  O_NOFOLLOW,
  O_NOFOLLOW_ANY,
  O_RDONLY,
  RESOLVE_BENEATH,
  RESOLVE_NO_MAGICLINKS,
  RESOLVE_NO_SYMLINKS,
} from "./at-calls.ts";

/** An open workspace directory that every path is resolved beneath. */
export interface Root {
  fd: number;
  /** Its real path. */
  real: string;
  /** The path the workspace was named by (absolute), when it differs from `real` (a symlinked workspace). */
  named: string;
  calls: AtCalls;
  /** "kernel": openat2 first, the walk when it refuses; "walk": the walk only (other systems, and tests of it). */
  resolver: "kernel" | "walk";
  /**
   * "follow": a symlink on the path is followed while it stays beneath the root;
   * "refuse": any symlink on it is SymlinkOnPathError — a replay of recorded
   * paths, which were real when recorded, so a link there now was put in since.
   */
  links: "follow" | "refuse";
}

/** Opens the workspace directory as a root; `close` it after use. */
export function openRoot(workspace: string, calls: AtCalls, resolver: Root["resolver"], links: Root["links"] = "follow"): Root & { close(): void } {
  const real = realpathSync(workspace);
  const fd = openSync(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return { fd, real, named: resolve(workspace), calls, resolver, links, close: () => closeSync(fd) };
}

/** Symlinks followed in one resolution before giving up, as the kernel does (ELOOP). */
const MAX_LINK_HOPS = 40;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY;

/**
 * Opens `path` (relative to the root, or absolute inside it) beneath the root, with
 * `flags`: a symlink or `..` that leads outside is refused with WorkspaceEscapeError,
 * one inside is followed. With `createDirs`, missing directories are made (mkdirat
 * under the descriptor of their parent) and `path` must name a directory.
 */
export function openBeneath(root: Root, path: string, flags: number, createDirs = false, requested = path): number {
  const rel = relativeTo(root, path, requested);
  if (root.resolver === "kernel") {
    let fd = kernelOpen(root, rel, flags);
    // EAGAIN: a rename or mount anywhere on the system raced a `..` of the lookup, and
    // openat2(2) could not prove it stayed beneath; its man page says to retry.
    for (let retry = 0; retry < EAGAIN_RETRIES && typeof fd !== "number" && fd.code === "EAGAIN"; retry += 1) fd = kernelOpen(root, rel, flags);
    if (typeof fd === "number") return fd;
    // Not there yet and we create: the walk makes what is missing, component by component.
    if (!(fd.code === "ENOENT" && createDirs) && !TO_WALK.has(fd.code)) throw fd.error;
  }
  return walk(root, rel, flags, createDirs, requested);
}

/** Tries of openat2 again after EAGAIN before the walk decides (a busy system renames all the time). */
const EAGAIN_RETRIES = 3;

/**
 * The kernel's refusals the walk decides again: EXDEV is any absolute symlink (even
 * one pointing inside) or a real escape; ELOOP a magic link or a loop; EAGAIN a
 * rename racing the lookup, still, after the retries; ENOSYS no openat2.
 */
const TO_WALK = new Set(["EXDEV", "ELOOP", "EAGAIN", "ENOSYS"]);

function kernelOpen(root: Root, rel: string, flags: number): number | { code: string; error: unknown } {
  try {
    const resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (root.links === "refuse" ? RESOLVE_NO_SYMLINKS : 0);
    return root.calls.openat2(root.fd, rel === "" ? "." : rel, flags | O_CLOEXEC, 0, resolve);
  } catch (error) {
    return { code: (error as { code?: string }).code ?? "", error };
  }
}

/**
 * Resolves `rel` one component at a time, each opened with O_NOFOLLOW relative to
 * the directory before it; a symlink is read and its target resolved the same way
 * (an absolute one only if it points inside), `..` steps back to the directory
 * the walk came from and never above the root. The kernel never follows a link
 * for us, so nothing can swap one in between a check and a use.
 */
function walk(root: Root, rel: string, flags: number, createDirs: boolean, requested: string): number {
  const stack: number[] = [];
  /** The names of the directories on `stack`, for messages. */
  const passed: string[] = [];
  const current = () => stack.at(-1) ?? root.fd;
  const queue = components(rel);
  let hops = 0;
  let creations = 0;
  try {
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === "..") {
        if (stack.length === 0) throw new WorkspaceEscapeError(requested, resolve(root.real, "..", ...queue), root.real);
        closeSync(stack.pop()!);
        passed.pop();
        continue;
      }
      const last = queue.length === 0;
      try {
        stack.push(root.calls.openat(current(), name, (last ? flags : DIR_FLAGS) | O_NOFOLLOW | O_NOFOLLOW_ANY | O_CLOEXEC, 0));
        passed.push(name);
        continue;
      } catch (error) {
        if (isErrno(error, "ENOENT") && createDirs && creations < MAX_LINK_HOPS) {
          creations += 1;
          makeDir(root.calls, current(), name);
          queue.unshift(name);
          continue;
        }
        // A symlink opened with O_NOFOLLOW: ELOOP (Linux, macOS), ENOTDIR with O_DIRECTORY, EMLINK (FreeBSD).
        if (!["ELOOP", "ENOTDIR", "EMLINK", "EFTYPE"].some((code) => isErrno(error, code))) throw error;
        const target = root.calls.readlinkat(current(), name);
        if (target === undefined) throw error;
        if (root.links === "refuse") throw new SymlinkOnPathError(requested, [...passed, name].join("/"), target);
        hops += 1;
        if (hops > MAX_LINK_HOPS) throw Object.assign(new Error(`ELOOP: too many levels of symbolic links in '${requested}'`), { code: "ELOOP" });
        if (isAbsolute(target)) {
          // An absolute link starts again from the root, if it points inside at all.
          const inside = relativeTo(root, target, requested);
          while (stack.length > 0) closeSync(stack.pop()!);
          passed.length = 0;
          queue.unshift(...components(inside));
        } else {
          queue.unshift(...components(target));
        }
      }
    }
    // The root itself ("" or "."): a descriptor of our own, so the caller may close it.
    if (stack.length === 0) stack.push(root.calls.openat(root.fd, ".", flags | O_CLOEXEC, 0));
    return stack.pop()!;
  } finally {
    for (const fd of stack) closeSync(fd);
  }
}

/** A replayed path met a symlink: a directory (or the file) on it was replaced by a link since it was recorded. */
export class SymlinkOnPathError extends AgentError {
  readonly code = "SYMLINK_ON_PATH";
  readonly category = "state" as const;
  constructor(
    readonly requested: string,
    readonly link: string,
    readonly target: string,
  ) {
    super(`${requested}: ${link} is now a symlink (to ${target}), and a replayed path is never followed through one; remove the link, or restore the file by hand`);
  }
}

function makeDir(calls: AtCalls, dir: number, name: string): void {
  try {
    // 0777 less the umask, as mkdir -p makes them.
    calls.mkdirat(dir, name, 0o777);
  } catch (error) {
    // Made meanwhile by someone else, or a dangling symlink: the next open tells which.
    if (!isErrno(error, "EEXIST")) throw error;
  }
}

/** Path components, without the empty and `.` ones (`..` stays: what it means depends on the links before it). */
export function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/**
 * `path` relative to the root. An absolute path must be inside it, as named or as
 * resolved (a path through a symlink elsewhere that leads back in). The result may
 * hold `..` and links: resolving it beneath the root is what checks them.
 */
export function relativeTo(root: Root, path: string, requested: string): string {
  if (!isAbsolute(path)) return path;
  for (const base of new Set([root.real, root.named])) {
    if (path === base) return "";
    if (path.startsWith(`${base}/`)) return path.slice(base.length + 1);
  }
  const real = realPathOf(path);
  const rel = relative(root.real, real);
  if (rel === "" || (!rel.startsWith("../") && rel !== ".." && !isAbsolute(rel))) return rel;
  throw new WorkspaceEscapeError(requested, real, root.real);
}
