import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** What a scan keeps of a file: enough to tell that it changed. */
export interface ScannedFile {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** Directories a shell command's effects are not looked for in: git's own data and installed packages. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

/**
 * The regular files of the workspace with their size, mtime and inode, by path
 * relative to it; undefined when there are more than `maxFiles` (config
 * `files.shellScanMaxFiles`): the scan is a cost on every shell command, so a
 * huge tree is not scanned at all. Symlinks are not followed; `.git`,
 * `node_modules` and whatever `skip` says (the agent's state) are left out.
 */
export function scanWorkspace(workspace: string, maxFiles: number, skip: (absolute: string) => boolean = () => false): Map<string, ScannedFile> | undefined {
  const files = new Map<string, ScannedFile>();
  const pending = [""];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(join(workspace, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const rel = dir === "" ? entry.name : `${dir}/${entry.name}`;
      const absolute = join(workspace, rel);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !skip(absolute)) pending.push(rel);
        continue;
      }
      if (!entry.isFile() || skip(absolute)) continue;
      if (files.size >= maxFiles) return undefined;
      try {
        const stat = lstatSync(absolute);
        files.set(rel, { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino });
      } catch {
        // Gone between the listing and the stat: not there.
      }
    }
  }
  return files;
}

/** The paths whose file was created, changed or removed between two scans. */
export function changedPaths(before: Map<string, ScannedFile>, after: Map<string, ScannedFile>): string[] {
  const changed: string[] = [];
  for (const [path, now] of after) {
    const then = before.get(path);
    if (!then || then.size !== now.size || then.mtimeMs !== now.mtimeMs || then.ino !== now.ino) changed.push(path);
  }
  for (const path of before.keys()) if (!after.has(path)) changed.push(path);
  return changed.sort();
}
