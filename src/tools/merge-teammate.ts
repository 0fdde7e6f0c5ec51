import { z } from "zod";
import { UnknownAgentError } from "../core/errors.ts";
import { type TeammateRuntime, TeammateUnavailableError } from "../team/teammate-runtime.ts";
import type { GitWorktrees } from "../worktrees/worktrees.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const MergeTeammateInput = lazySchema(() =>
  z.strictObject({
    name: z.string().describe("The worktree teammate whose branch to merge into your current branch."),
  }),
);
export type MergeTeammateInput = z.infer<typeof MergeTeammateInput>;

/**
 * The Lead's side of worktree isolation: merges a teammate's branch into the
 * workspace's current branch. It changes the Lead's files, so it is an `edit`
 * for the permission modes. Conflicts come back as an error result after the
 * merge was aborted: the workspace is left as it was.
 */
export function mergeTeammateTool(team: TeammateRuntime, worktrees: () => Promise<GitWorktrees>) {
  return defineTool({
    name: "merge_teammate",
    description:
      "Merge the branch of a teammate spawned with isolation \"worktree\" into your current branch (a merge commit; " +
      "its uncommitted work is committed to its branch first). Needs your working tree free of uncommitted changes. " +
      "On a conflict nothing is merged and the conflicting files are listed.",
    input: MergeTeammateInput,
    effect: "edit",
    subject: () => "",
    async run(input) {
      const teammate = team.list().find((record) => record.name === input.name);
      if (!teammate) {
        throw new UnknownAgentError(input.name, `teammates: ${team.list().map((record) => record.name).join(", ") || "none"}`);
      }
      if (!teammate.worktree) {
        throw new TeammateUnavailableError(`${input.name} works in the shared workspace (spawned without isolation "worktree"): its changes are already there, there is no branch to merge`);
      }
      if (teammate.state === "running") {
        throw new TeammateUnavailableError(`${input.name} is still working; merge when its result has arrived, so no half-done turn is merged`);
      }
      const outcome = await (await worktrees()).merge(teammate.worktree, input.name);
      const pending = outcome.committedPending ? " (its uncommitted work was committed to its branch first)" : "";
      if (outcome.commit === undefined) return { content: `${outcome.branch}: ${outcome.stat}${pending}` };
      return { content: `merged ${outcome.branch} into ${outcome.into} (merge commit ${outcome.commit})${pending}:\n${outcome.stat}` };
    },
  });
}
