import { defineCommand } from "citty";
import { systemClock } from "../../core/clock.ts";
import { TeammateUnavailableError } from "../../team/teammate-runtime.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { writeJson, writeOut } from "../output.ts";
import { editStoppedTeammate, refuseHeldTeammate } from "./stopped-session.ts";
import { GitWorktrees, type RemoveOutcome } from "../../worktrees/worktrees.ts";
import { storeArg } from "../store/store-arg.ts";
import { resolveSandbox } from "../../security/sandbox/sandbox.ts";
import { loadSettings } from "../../config/load.ts";
import { agentDirOf } from "../../security/protected-paths.ts";
import type { TeammateWorktree } from "../../worktrees/teammate-worktree.ts";

export const teamRmCommand = defineCommand({
  meta: {
    name: "rm",
    description: "Remove a shut-down or failed teammate from a stopped session, freeing its name (its history is kept aside; its git worktree removed, its branch kept)",
  },
  args: {
    name: { type: "positional", required: true, valueHint: "name", description: "The teammate to remove" },
    force: { type: "boolean", description: "Remove it even with unfinished work (moved to its quarantine/)" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const name = args.name;
    const { session, value: outcome } = await editStoppedTeammate(args, async (teammate, { session, stores }) => {
      const store = stores.mailbox;
      const [listing] = await store.list({ agent: teammate.name });
      const unfinished = (listing?.counts.ready ?? 0) + (listing?.counts.processing ?? 0);
      // "running" in a stopped session: its runtime stopped mid-task and
      // `agent drain` would carry the work on.
      if ((teammate.state === "running" || unfinished > 0) && !args.force) {
        throw new TeammateUnavailableError(
          `teammate ${name} has unfinished work (state ${teammate.state}, ${unfinished} message(s) in ready/ or processing/); ` +
            "run `agent drain` to finish it, or pass --force to remove it anyway (its messages go to its quarantine/)",
        );
      }
      // Even with --force: a worker running it would go on writing its mailbox and history.
      await refuseHeldTeammate(stores, teammate.name);
      // Its unfinished messages stay as evidence in quarantine/, never deleted.
      const quarantined: string[] = [];
      if (unfinished > 0) {
        await store.recover(teammate.name);
        for (let message = await store.claim(teammate.name); message; message = await store.claim(teammate.name)) {
          await store.quarantine(message, `teammate ${name} removed with \`agent team rm --force\``);
          quarantined.push(message.id);
        }
      }
      // Its worktree goes (its uncommitted work committed to the branch first); the branch stays for a merge.
      const worktree = teammate.worktree
        ? { path: teammate.worktree.path, ...(await (await worktreesOf(teammate.worktree, session.meta.id)).remove(teammate.worktree, name)) }
        : undefined;
      const history = await stores.stores.histories.archive(teammate.name, systemClock.now());
      // The team's record last: a removal cut short is finished by running it again.
      await stores.stores.team.remove(name);
      return { state: teammate.state, history, quarantined, worktree };
    });
    if (args.json) {
      const { worktree, ...rest } = outcome;
      await writeJson({
        session_id: session.meta.id,
        removed: name,
        ...rest,
        history: outcome.history ?? null,
        worktree: worktree
          ? { path: worktree.path, branch: worktree.branch, committed_pending: worktree.committedPending, unmerged_commits: worktree.unmerged }
          : null,
      });
      return;
    }
    const notes = [
      outcome.history ? `history kept at ${outcome.history}` : "it had no history",
      ...(outcome.quarantined.length > 0 ? [`${outcome.quarantined.length} unfinished message(s) moved to its quarantine/`] : []),
      ...(outcome.worktree ? [worktreeNote(outcome.worktree)] : []),
    ];
    await writeOut(`removed ${name} (${outcome.state}) from session ${session.meta.id}; ${notes.join("; ")}\n`);
  },
});

function worktreeNote(worktree: RemoveOutcome & { path: string }): string {
  const committed = worktree.committedPending ? " (its uncommitted work committed to the branch first)" : "";
  const branch =
    worktree.unmerged > 0
      ? `its branch ${worktree.branch} is kept with ${worktree.unmerged} commit(s) not merged (merge it with git, or delete it: git branch -D ${worktree.branch})`
      : `its branch ${worktree.branch} is kept, fully merged (delete it with git branch -d ${worktree.branch})`;
  return `worktree ${worktree.path} removed${committed}; ${branch}`;
}

/** The worktrees a stored worktree belongs to, its git run in the sandbox like the runtime's (the teammate's work can have set up its config). */
function worktreesOf(worktree: TeammateWorktree, session: string): Promise<GitWorktrees> {
  const workspace = GitWorktrees.workspaceOf(worktree);
  const agentDir = agentDirOf(workspace);
  // The sandbox the workspace's settings ask for (danger-full-access included), as a run there would have.
  const { settings } = loadSettings({ workspace });
  const { sandbox } = resolveSandbox({ ...settings.sandbox, workspace, agentDir, stateRoot: agentDir });
  return GitWorktrees.forWorktree(worktree, session, sandbox);
}
