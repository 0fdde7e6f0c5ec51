import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import { type GitLaunch, type GitResult, firstLine, git, readGlobalIdentity } from "./git.ts";
import { type GitConfigEntry, assertWorktreePointer, checkedConfig } from "./git-safety.ts";
import type { TeammateWorktree } from "./teammate-worktree.ts";
import { MergeConflictError, MergeRefusedError, WorktreeGitError, WorktreeUnavailableError } from "./worktree-errors.ts";

/** The repository a workspace is in: its top level and the workspace's place in it. */
export interface GitRepository {
  top: string;
  /** The workspace relative to `top`, or "" at the top. */
  prefix: string;
  /** The git directory shared by all its worktrees (objects, refs, `worktrees/`). */
  commonDir: string;
}

export interface MergeOutcome {
  branch: string;
  /** The Lead's branch it went into. */
  into: string;
  /** The merge commit (short), or undefined when there was nothing to merge. */
  commit?: string;
  /** `git diff --stat` of what the merge brought in. */
  stat: string;
  /** Whether the teammate's uncommitted work was committed first. */
  committedPending: boolean;
}

export interface RemoveOutcome {
  branch: string;
  /** Whether uncommitted work was committed to the branch before the worktree went. */
  committedPending: boolean;
  /** Commits on the branch that the Lead's HEAD does not have. */
  unmerged: number;
}

const STAT_LINES = 20;

/** Where the worktrees of a workspace live (ignored by git through their own `.gitignore`). */
export function worktreesDir(workspace: string): string {
  return join(workspace, ".agent", "worktrees");
}

/**
 * Teammates' git worktrees for one session: each on its own branch
 * `agent/<session>/<name>`, under `<workspace>/.agent/worktrees/<session>/<name>`
 * (inside `.agent/`, which the Lead's sandbox keeps read-only and git ignores).
 * The runtime commits a teammate's work for it (its sandbox cannot write the
 * repository's git data) and merges its branch into the Lead's current branch,
 * aborting cleanly on a conflict.
 *
 * Every git it runs is hardened (git.ts) and, with a sandbox, inside it with
 * only the repository writable (its config and hooks read-only); before each
 * operation the repository's config is refused if any of it would make git
 * run a program, and a teammate's `.git` if it points anywhere but its own
 * admin directory (git-safety.ts): the model can have written both.
 */
export class GitWorktrees {
  /** One git operation of the runtime at a time: concurrent commits and worktree adds would race for git's lock files. */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #launch: GitLaunch | undefined;
  readonly #globalIdentity: { name?: string; email?: string };
  /** The workspace's config as the last check read it. */
  #config: GitConfigEntry[] = [];

  private constructor(
    readonly workspace: string,
    readonly session: string,
    readonly repository: GitRepository,
    sandbox: Sandbox | undefined,
    globalIdentity: { name?: string; email?: string },
  ) {
    const { top, commonDir } = repository;
    const outside = relative(top, commonDir).startsWith("..") || isAbsolute(relative(top, commonDir));
    this.#launch = sandbox
      ? (argv, cwd) =>
          sandbox.wrap(argv, cwd, {
            writable: [top, ...(outside ? [commonDir] : [])],
            readOnly: ["config", "hooks", "info"].map((name) => join(commonDir, name)),
          })
      : undefined;
    this.#globalIdentity = globalIdentity;
  }

  /**
   * The worktrees of `workspace`'s repository, or the reason there can be none
   * (not a repository). Finding the repository is the one git run outside the
   * sandbox (it must see above the workspace); rev-parse runs nothing of the
   * repository's, and the hardening applies.
   */
  static async open(workspace: string, session: string, sandbox?: Sandbox): Promise<GitWorktrees | { problem: string }> {
    const found = await git(workspace, ["rev-parse", "--show-toplevel", "--show-prefix", "--git-common-dir"]);
    if (found.code !== 0) return { problem: found.code === 127 ? firstLine(found) : `${workspace} is not in a git repository` };
    const [top = workspace, prefix = "", common = ".git"] = found.stdout.split("\n");
    const repository = { top, prefix: prefix.replace(/\/$/, ""), commonDir: resolve(workspace, common) };
    return new GitWorktrees(workspace, session, repository, sandbox, await readGlobalIdentity());
  }

  /** Like open(), but a workspace without a repository is a WorktreeUnavailableError. */
  static async require(workspace: string, session: string, sandbox?: Sandbox): Promise<GitWorktrees> {
    const opened = await GitWorktrees.open(workspace, session, sandbox);
    if ("problem" in opened) throw notAvailable(opened.problem);
    return opened;
  }

  /** The worktrees of the workspace a stored worktree belongs to (for the admin commands, which have no runtime). */
  static forWorktree(worktree: TeammateWorktree, session: string, sandbox?: Sandbox): Promise<GitWorktrees> {
    return GitWorktrees.require(GitWorktrees.workspaceOf(worktree), session, sandbox);
  }

  /** The Lead's workspace a stored worktree was made in. */
  static workspaceOf(worktree: TeammateWorktree): string {
    // path = <workspace>/.agent/worktrees/<session>/<name>
    return resolve(worktree.path, "..", "..", "..", "..");
  }

  branchOf(name: string): string {
    return `agent/${this.session}/${name}`;
  }

  pathOf(name: string): string {
    return join(worktreesDir(this.workspace), this.session, name);
  }

  /**
   * Creates the teammate's worktree on a new branch from the Lead's HEAD. The
   * same name spawned again in this session (after a failure, or a spawn cut
   * short) gets its existing branch back, with the work on it.
   */
  create(name: string): Promise<TeammateWorktree> {
    return this.#serial(() => this.#create(name));
  }

  async #create(name: string): Promise<TeammateWorktree> {
    const head = await this.#git(this.workspace, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
    if (head.code !== 0) {
      throw new WorktreeUnavailableError(
        `isolation "worktree" needs a commit to branch from, and the repository at ${this.repository.top} has none yet; commit once, or spawn without isolation`,
      );
    }
    const branch = this.branchOf(name);
    const path = this.pathOf(name);
    this.#ensureIgnored();
    const exists = (await this.#git(this.workspace, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`])).code === 0;
    if (exists) {
      if (!existsSync(join(path, ".git"))) await this.#add(path, [branch]);
      const base = await this.#run(this.workspace, ["merge-base", "HEAD", branch]);
      return this.#describe(path, branch, base.stdout.trim());
    }
    await this.#add(path, ["-b", branch], "HEAD");
    return this.#describe(path, branch, head.stdout.trim());
  }

  /** Puts a teammate's worktree back when its directory is gone (the branch must still exist). */
  ensure(worktree: TeammateWorktree): Promise<void> {
    return this.#serial(() => this.#ensure(worktree), worktree);
  }

  async #ensure(worktree: TeammateWorktree): Promise<void> {
    if (existsSync(join(worktree.path, ".git"))) return;
    const exists = (await this.#git(this.workspace, ["rev-parse", "--verify", "--quiet", `refs/heads/${worktree.branch}^{commit}`])).code === 0;
    if (!exists) {
      throw new WorktreeUnavailableError(
        `the worktree ${worktree.path} and its branch ${worktree.branch} are gone; spawn the teammate again for a new one`,
      );
    }
    this.#ensureIgnored();
    await this.#add(worktree.path, [worktree.branch]);
  }

  /** Commits everything in the worktree that is not committed yet, as the teammate; false when there was nothing. */
  commitPending(worktree: TeammateWorktree, name: string, message: string): Promise<boolean> {
    return this.#serial(() => this.#commitPending(worktree, name, message), worktree);
  }

  async #commitPending(worktree: TeammateWorktree, name: string, message: string): Promise<boolean> {
    await this.#run(worktree.path, ["add", "--all"]);
    const staged = await this.#git(worktree.path, ["diff", "--cached", "--quiet"]);
    if (staged.code === 0) return false;
    const identity = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: `${name}@agent.invalid`, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: `${name}@agent.invalid` };
    await this.#run(worktree.path, ["commit", "--quiet", "--no-verify", "-m", message], identity);
    return true;
  }

  /** `git diff --stat` of the branch since it started (its summary line alone when long), or "no changes". */
  diffStat(worktree: TeammateWorktree): Promise<string> {
    return this.#serial(() => this.#diffStat(worktree), worktree);
  }

  async #diffStat(worktree: TeammateWorktree): Promise<string> {
    const stat = await this.#run(worktree.path, ["diff", "--stat=120", worktree.base, "HEAD"]);
    return trimStat(stat.stdout);
  }

  /**
   * Merges the teammate's branch into the Lead's current branch with a merge
   * commit. Refused (nothing done) when the Lead's tree has uncommitted changes
   * to tracked files, a merge is in progress or HEAD is detached. The teammate's
   * uncommitted work is committed to its branch first. On a conflict the merge
   * is aborted — no MERGE_HEAD, the Lead's tree as it was — and a
   * MergeConflictError names the files.
   */
  merge(worktree: TeammateWorktree, name: string): Promise<MergeOutcome> {
    return this.#serial(() => this.#merge(worktree, name), worktree);
  }

  async #merge(worktree: TeammateWorktree, name: string): Promise<MergeOutcome> {
    const into = await this.#git(this.workspace, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
    if (into.code !== 0) {
      throw new MergeRefusedError(`cannot merge ${name}: the workspace is on a detached HEAD; check out a branch to merge into first`);
    }
    const target = into.stdout.trim();
    if ((await this.#git(this.workspace, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"])).code === 0) {
      throw new MergeRefusedError(`cannot merge ${name}: a merge is already in progress in the workspace; finish it (git commit) or abort it (git merge --abort) first`);
    }
    const status = await this.#run(this.workspace, ["status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty"]);
    const dirty = status.stdout.split("\n").filter((line) => line.trim() !== "").map((line) => line.slice(3));
    if (dirty.length > 0) {
      const shown = dirty.slice(0, 5).join(", ") + (dirty.length > 5 ? `, and ${dirty.length - 5} more` : "");
      throw new MergeRefusedError(`cannot merge ${name}: the workspace has uncommitted changes (${shown}); commit or stash them, then merge again`);
    }
    if (!existsSync(join(worktree.path, ".git"))) await this.#ensure(worktree);
    const committedPending = await this.#commitPending(worktree, name, `${name}: work not yet committed when the Lead merged`);
    const ahead = await this.#run(this.workspace, ["rev-list", "--count", `HEAD..${worktree.branch}`]);
    if (Number(ahead.stdout.trim()) === 0) {
      return { branch: worktree.branch, into: target, stat: "nothing to merge: the branch has no commits the workspace lacks", committedPending };
    }
    const merged = await this.#git(this.workspace, ["merge", "--no-ff", "--no-edit", "-m", `Merge teammate ${name} (${worktree.branch})`, worktree.branch], this.#identity());
    if (merged.code !== 0) {
      const conflicts = await this.#git(this.workspace, ["diff", "--name-only", "--diff-filter=U"]);
      const files = conflicts.stdout.split("\n").filter((line) => line !== "");
      await this.#abortMerge();
      if (files.length > 0) {
        throw new MergeConflictError(
          worktree.branch,
          files,
          `merging ${worktree.branch} into ${target} conflicts in ${files.join(", ")}; the merge was aborted and the workspace is unchanged. ` +
            `Ask ${name} to redo its change on top of yours, or merge the branch yourself with git and resolve the conflict`,
        );
      }
      throw new WorktreeGitError(`merging ${worktree.branch} into ${target} failed: ${firstLine(merged)}; the workspace is unchanged`);
    }
    const commit = await this.#run(this.workspace, ["rev-parse", "--short", "HEAD"]);
    const stat = await this.#run(this.workspace, ["diff", "--stat=120", "HEAD^1", "HEAD"]);
    return { branch: worktree.branch, into: target, commit: commit.stdout.trim(), stat: trimStat(stat.stdout), committedPending };
  }

  /** Removes the teammate's worktree, committing its uncommitted work to the branch first; the branch is kept. */
  remove(worktree: TeammateWorktree, name: string): Promise<RemoveOutcome> {
    return this.#serial(() => this.#remove(worktree, name), worktree);
  }

  async #remove(worktree: TeammateWorktree, name: string): Promise<RemoveOutcome> {
    let committedPending = false;
    if (existsSync(join(worktree.path, ".git"))) {
      committedPending = await this.#commitPending(worktree, name, `${name}: work not yet committed when it was removed`);
      await this.#run(this.workspace, ["worktree", "remove", "--force", worktree.path]);
    }
    await this.#git(this.workspace, ["worktree", "prune"]);
    const ahead = await this.#git(this.workspace, ["rev-list", "--count", `HEAD..${worktree.branch}`]);
    return { branch: worktree.branch, committedPending, unmerged: ahead.code === 0 ? Number(ahead.stdout.trim()) : 0 };
  }

  /**
   * One operation after the last, each starting by checking the repository
   * (and the teammate's worktree it touches) afresh: the model may have
   * changed either since the last one.
   */
  #serial<T>(operation: () => Promise<T>, worktree?: TeammateWorktree): Promise<T> {
    const work = async () => {
      this.#config = await checkedConfig(this.workspace, this.#launch);
      if (worktree && existsSync(join(worktree.path, ".git"))) await this.#checkWorktree(worktree);
      return operation();
    };
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => {});
    return next;
  }

  async #add(path: string, branchArgs: string[], start?: string): Promise<void> {
    // A worktree whose directory was deleted is still registered until pruned.
    await this.#git(this.workspace, ["worktree", "prune"]);
    mkdirSync(join(path, ".."), { recursive: true });
    const args = start === undefined ? ["worktree", "add", "--quiet", path, ...branchArgs] : ["worktree", "add", "--quiet", ...branchArgs, path, start];
    await this.#run(this.workspace, args);
  }

  #describe(path: string, branch: string, base: string): TeammateWorktree {
    return { path, workspace: this.repository.prefix === "" ? path : join(path, this.repository.prefix), branch, base };
  }

  /** The worktrees directory ignores itself, so the Lead's `git status` never lists the teammates' trees. */
  #ensureIgnored(): void {
    const dir = worktreesDir(this.workspace);
    mkdirSync(dir, { recursive: true });
    const ignore = join(dir, ".gitignore");
    if (!existsSync(ignore)) writeFileSync(ignore, "# Written by agent: teammates' git worktrees (docs/team-worktrees.md)\n*\n");
  }

  async #abortMerge(): Promise<void> {
    if ((await this.#git(this.workspace, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"])).code !== 0) return;
    const aborted = await this.#git(this.workspace, ["merge", "--abort"]);
    if (aborted.code !== 0) await this.#run(this.workspace, ["reset", "--merge"]);
  }

  /** The repository's committer when it has one configured, else the user's global one, else "agent". */
  #identity(): Record<string, string> {
    const local = (key: string) => this.#config.findLast((entry) => entry.key === key && entry.value)?.value;
    const name = local("user.name") ?? this.#globalIdentity.name ?? "agent";
    const email = local("user.email") ?? this.#globalIdentity.email ?? "agent@agent.invalid";
    return { GIT_AUTHOR_NAME: name, GIT_COMMITTER_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_EMAIL: email };
  }

  /** A teammate's worktree: its `.git` must point at its own admin directory, and its config (worktree config included) must be safe. */
  async #checkWorktree(worktree: TeammateWorktree): Promise<void> {
    assertWorktreePointer(worktree.path, this.repository.commonDir);
    await checkedConfig(worktree.path, this.#launch);
  }

  #git(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
    return git(cwd, args, env, this.#launch);
  }

  async #run(cwd: string, args: string[], env?: Record<string, string>): Promise<GitResult> {
    const result = await this.#git(cwd, args, env);
    if (result.code !== 0) throw new WorktreeGitError(`git ${args[0]} failed in ${cwd}: ${firstLine(result)}`);
    return result;
  }
}

/** What a worktree teammate is told about where it works, after its role. */
export function worktreePromptNote(worktree: TeammateWorktree): string {
  return [
    `You work in your own git worktree, on branch ${worktree.branch}: other teammates do not see your changes, nor you theirs, until the Lead merges your branch.`,
    "Your changes are committed to your branch for you at the end of each turn; you need not run git commit.",
  ].join("\n");
}

function notAvailable(problem: string): WorktreeUnavailableError {
  return new WorktreeUnavailableError(
    `isolation "worktree" needs a git repository, and ${problem}; run \`git init\` and commit there, or spawn without isolation`,
  );
}

function trimStat(stat: string): string {
  const lines = stat.trimEnd().split("\n").filter((line) => line.trim() !== "");
  if (lines.length === 0) return "no changes";
  return (lines.length > STAT_LINES ? [lines.at(-1)!] : lines).map((line) => line.trim()).join("\n");
}
