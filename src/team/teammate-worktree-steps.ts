import type { TeammateRecord } from "./team-registry.ts";
import type { TeamContext } from "./team-context.ts";
import type { GitWorktrees } from "../worktrees/worktrees.ts";
import { WorktreeUnavailableError } from "../worktrees/worktree-errors.ts";

/** The workspace's git worktrees, or why a teammate cannot have one here. */
export async function openWorktrees(team: TeamContext): Promise<GitWorktrees> {
  if (!team.o.worktrees) throw new WorktreeUnavailableError('isolation "worktree" is not available in this runtime; spawn without isolation');
  return team.o.worktrees();
}

/**
 * A worktree teammate's result ends with its branch and what changed on it:
 * its work is committed to its branch first (its sandbox cannot), so the
 * Lead can merge it. A git failure is reported in the result, not a failure of the teammate.
 */
export async function withWorktreeReport(team: TeamContext, record: TeammateRecord, result: string): Promise<string> {
  const worktree = record.worktree;
  if (!worktree) return result;
  try {
    const worktrees = await openWorktrees(team);
    await worktrees.commitPending(worktree, record.name, `${record.name}: work of its turn`);
    const stat = await worktrees.diffStat(worktree);
    return `${result}\n\n[worktree: branch ${worktree.branch}; changes since it branched:${stat.includes("\n") ? "\n" : " "}${stat}]`;
  } catch (error) {
    return `${result}\n\n[worktree: branch ${worktree.branch}; its changes could not be read: ${(error as Error).message}]`;
  }
}

/** Finds a restored teammate's worktree again (re-adding it from its branch when the directory is gone); false, and the teammate failed, when it cannot. */
export async function restoreWorktree(team: TeamContext, record: TeammateRecord): Promise<boolean> {
  try {
    await (await openWorktrees(team)).ensure(record.worktree!);
    return true;
  } catch (error) {
    const worker = team.workers.get(record.name)!;
    worker.record = { ...worker.record, state: "failed", failure: `its worktree could not be restored: ${(error as Error).message}` };
    return false;
  }
}
