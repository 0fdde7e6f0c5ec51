import { existsSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { ensureDir } from "../storage/atomic-file.ts";

/**
 * A teammate's name is freed (`agent team rm`, or a spawn over a failed
 * teammate) without losing what it did: its history moves to
 * `agents/removed/<name>-<stamp>.jsonl`, out of the way of a new teammate of
 * the same name, which starts with an empty history.
 */
export function removedDir(stateDir: string): string {
  return join(stateDir, "agents", "removed");
}

/** Moves `agents/<name>.jsonl` aside; returns where it went (state-dir relative), or undefined if it had none. */
export function archiveHistory(stateDir: string, name: AgentName, at: Date): string | undefined {
  const from = join(stateDir, "agents", `${name}.jsonl`);
  if (!existsSync(from)) return undefined;
  ensureDir(removedDir(stateDir));
  // A stamp without ':' (refused in Windows file names); a second removal in
  // the same millisecond gets a suffix rather than overwriting the first.
  const stamp = at.toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
  for (let n = 0; ; n += 1) {
    const file = `${name}-${stamp}${n === 0 ? "" : `.${n}`}.jsonl`;
    if (existsSync(join(removedDir(stateDir), file))) continue;
    renameSync(from, join(removedDir(stateDir), file));
    return `agents/removed/${file}`;
  }
}

// What follows `<name>-` in an archived history's file name; the upper-case T
// and Z never occur in an agent name, so "alice-2" cannot pass for "alice".
const STAMP_TAIL = /^\d{4}-\d{2}-\d{2}T\d{6}Z(\.\d+)?\.jsonl$/;

/** Whether a teammate of this name was removed before (its history is archived). */
export function wasRemoved(stateDir: string, name: AgentName): boolean {
  try {
    return readdirSync(removedDir(stateDir)).some((file) => file.startsWith(`${name}-`) && STAMP_TAIL.test(file.slice(name.length + 1)));
  } catch {
    return false;
  }
}
