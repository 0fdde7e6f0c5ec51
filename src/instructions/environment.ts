import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Clock } from "../core/clock.ts";
import { localDate, localZoneIsUtc } from "./local-date.ts";

export interface EnvironmentFacts {
  platform: string;
  /** The local calendar date, YYYY-MM-DD. */
  date: string;
  git: { repository: false } | { repository: true; branch?: string; detachedAt?: string };
}

/** What an agent should know about where it runs; the workspace itself is always `.`. */
export function environmentFacts(
  workspace: string,
  clock: Clock,
  platform: string = process.platform,
  env: Record<string, string | undefined> = process.env,
): EnvironmentFacts {
  return { platform, date: localDate(clock.now(), localZoneIsUtc(env)), git: gitFacts(workspace) };
}

/**
 * Read from `.git` directly rather than by running git: no process per run, and
 * the same answer without git installed. A `.git` file (worktree, submodule)
 * points at the real git dir.
 */
function gitFacts(workspace: string): EnvironmentFacts["git"] {
  for (let dir = workspace; ; dir = dirname(dir)) {
    const gitDir = gitDirAt(dir);
    if (gitDir !== undefined) return { repository: true, ...head(gitDir) };
    if (dirname(dir) === dir) return { repository: false };
  }
}

function gitDirAt(dir: string): string | undefined {
  const dotGit = join(dir, ".git");
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
    const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
    return pointer === undefined ? undefined : resolve(dir, pointer);
  } catch {
    return undefined;
  }
}

function head(gitDir: string): { branch?: string; detachedAt?: string } {
  let text: string;
  try {
    text = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
  } catch {
    return {};
  }
  const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(text)?.[1];
  if (ref !== undefined) return { branch: ref };
  return /^[0-9a-f]{7,}$/.test(text) ? { detachedAt: text.slice(0, 7) } : {};
}
