import { type Dirent, readdirSync } from "node:fs";
import { join, relative as relativePath, sep } from "node:path";
import { isErrno } from "../storage/atomic-file.ts";
import { IGNORE_FILES, IgnoreRules } from "./ignore-rules.ts";

/** Whether `path` is `root` or below it (both absolute). */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

export interface WalkOptions {
  /** Real path of the workspace: ignore files are read from here down, and paths are given relative to it. */
  workspace: string;
  /** Real path of the directory to walk, the workspace or inside it; a protected one lists nothing. */
  start: string;
  /** Apply `.gitignore`, `.ignore` and `.git/info/exclude`, and skip `.git/`. */
  respectIgnore: boolean;
  /** Enter directories and list files whose name starts with ".". */
  includeHidden: boolean;
  /** Paths never entered, whatever the other options say: the state root as written and resolved. */
  protectedRoots: readonly string[];
  signal: AbortSignal;
}

export interface WalkedFile {
  /** Absolute path (real, since no symlink is followed below the real start). */
  absolute: string;
  /** Relative to the workspace, "/"-separated. */
  path: string;
}

/** How long the walk may hold the event loop before it lets other work (teammates, timers) run. */
const SLICE_MS = 8;

export class WalkInterruptedError extends Error {
  constructor() {
    super("interrupted");
  }
}

/**
 * The rules in force inside `start`: the workspace's and those of every
 * directory on the way down. A start that the rules exclude was named
 * explicitly, so, as with `rg PATTERN node_modules/x`, it is walked anyway —
 * under the rules found inside it only.
 */
function rulesAt(options: WalkOptions): IgnoreRules {
  if (!options.respectIgnore) return IgnoreRules.none();
  let rules = IgnoreRules.atWorkspace(options.workspace);
  const rel = relativePath(options.workspace, options.start);
  if (rel === "") return rules;
  let current = "";
  for (const segment of rel.split(sep)) {
    current = current === "" ? segment : `${current}/${segment}`;
    if (segment === ".git" || rules.ignores(current, true)) rules = IgnoreRules.none();
    rules = rules.enter(join(options.workspace, current), current);
  }
  return rules;
}

function readDirectory(absolute: string): Dirent[] {
  try {
    return readdirSync(absolute, { withFileTypes: true });
  } catch (error) {
    // A directory removed or made unreadable while we walk is skipped, as grep -r does with a warning.
    if (isErrno(error, "ENOENT") || isErrno(error, "EACCES") || isErrno(error, "ENOTDIR")) return [];
    throw error;
  }
}

interface DirectoryFrame {
  absolute: string;
  path: string;
  rules: IgnoreRules;
  entries: Dirent[];
  next: number;
}

/** `absolute` listed in name order, with the rules in force inside it: `outer` and, if asked, its own ignore files. */
function openDirectory(absolute: string, path: string, outer: IgnoreRules, readOwnRules: boolean): DirectoryFrame {
  const entries = readDirectory(absolute).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let rules = outer;
  if (readOwnRules) {
    const present = IGNORE_FILES.filter((name) => entries.some((entry) => entry.name === name && entry.isFile()));
    if (present.length > 0) rules = outer.enter(absolute, path, { present });
  }
  return { absolute, path, rules, entries, next: 0 };
}

/**
 * The regular files under `start`, depth first in name order (a directory's
 * files where its name sorts), so the same tree always comes out in the same
 * order and a capped search shows the same first results. Symbolic links are
 * not followed (one could lead out of the workspace or into the state root)
 * and special files (FIFOs, sockets) are left out, since reading one can
 * block forever.
 */
export async function* walkFiles(options: WalkOptions): AsyncGenerator<WalkedFile> {
  if (options.signal.aborted) throw new WalkInterruptedError();
  // Callers refuse a protected path the model named; a start reached another way (a glob's literal prefix) lists nothing.
  if (options.protectedRoots.some((root) => isWithin(options.start, root))) return;
  const startPath = relativePath(options.workspace, options.start).split(sep).join("/");
  // rulesAt has read the start's own ignore files already.
  const stack = [openDirectory(options.start, startPath, rulesAt(options), false)];
  let sliceStart = performance.now();
  while (stack.length > 0) {
    const dir = stack[stack.length - 1]!;
    const entry = dir.entries[dir.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const isDirectory = entry.isDirectory();
    if (!isDirectory && !entry.isFile()) continue;
    const name = entry.name;
    if (name.startsWith(".")) {
      if (!options.includeHidden) continue;
      if (isDirectory && name === ".git" && options.respectIgnore) continue;
    }
    const path = dir.path === "" ? name : `${dir.path}/${name}`;
    if (dir.rules.ignores(path, isDirectory)) continue;
    // Concatenated, not join()ed: a listed name has no separator to normalise, and join costs microseconds a file.
    const absolute = dir.absolute.endsWith(sep) ? dir.absolute + name : dir.absolute + sep + name;
    if (isDirectory) {
      if (options.protectedRoots.some((root) => isWithin(absolute, root))) continue;
      stack.push(openDirectory(absolute, path, dir.rules, options.respectIgnore));
    } else {
      yield { absolute, path };
    }
    // The caller's work on each file happens between these steps, so the clock counts it too.
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
      if (options.signal.aborted) throw new WalkInterruptedError();
    }
  }
}
