import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { fsyncDir, isErrno, pathExists, unlinkQuietly } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { Pacer } from "../storage/pacer.ts";
import { readIndex, rewriteIndex } from "./mailbox-index.ts";
import { checkFile } from "./message-file.ts";
import type { MailboxPaths } from "./paths.ts";
import type { PruneResult } from "./store.ts";

/**
 * Deletes done/ messages created before `before` with their id markers, and
 * orphan markers older than it. Runs under the mailbox lock.
 */
export async function pruneMailboxes(
  paths: MailboxPaths,
  fs: FsOps,
  agents: AgentName[],
  before: Date,
): Promise<PruneResult> {
  const cutoff = before.toISOString();
  const pacer = new Pacer();
  const pruned: PruneResult["pruned"] = [];
  for (const agent of agents) {
    const doneDir = paths.stateDirOf(agent, "done");
    if (!pathExists(doneDir, fs)) continue;
    const already = pruned.length;
    for (const name of fs.readdirSync(doneDir)) {
      await pacer.step();
      const checked = checkFile(fs, agent, doneDir, name);
      if (checked === "gone" || !checked.ok || checked.message.createdAtUtc >= cutoff) continue;
      fs.unlinkSync(join(doneDir, name));
      unlinkQuietly(paths.idMarker(checked.message.id), fs);
      pruned.push({ agent, id: checked.message.id });
    }
    if (pruned.length > already) {
      fsyncDir(doneDir, fs);
      forgetPruned(paths, fs, agent, pruned.slice(already));
    }
  }
  const orphanMarkers = await pruneOrphanMarkers(paths, fs, before.getTime(), pacer);
  if (pruned.length > 0 || orphanMarkers > 0) fsyncDir(paths.ids, fs);
  return { pruned, orphanMarkers };
}

/** Drops the pruned messages' records from the agent's index, so it does not grow with every message ever sent. */
function forgetPruned(paths: MailboxPaths, fs: FsOps, agent: AgentName, pruned: PruneResult["pruned"]): void {
  const path = paths.index(agent);
  const { records } = readIndex(fs, path);
  let forgot = false;
  for (const { id } of pruned) forgot = records.delete(`${id}.json`) || forgot;
  if (forgot) rewriteIndex(fs, path, records.values());
}

/**
 * Removes markers whose message file is gone: left by a send killed before its
 * link into ready/ (never delivered, never reported as sent) or by a message
 * deleted by hand. Under the lock no send is in flight, so a marker with no
 * second link is an orphan.
 */
async function pruneOrphanMarkers(paths: MailboxPaths, fs: FsOps, beforeMs: number, pacer: Pacer): Promise<number> {
  let names: string[];
  try {
    names = fs.readdirSync(paths.ids);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return 0;
    throw error;
  }
  let removed = 0;
  for (const name of names) {
    await pacer.step();
    const path = join(paths.ids, name);
    const stats = fs.lstatSync(path);
    if (stats.nlink === 1 && stats.mtimeMs < beforeMs) {
      fs.unlinkSync(path);
      removed += 1;
    }
  }
  return removed;
}
