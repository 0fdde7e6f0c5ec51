import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { walkFiles } from "../../src/search/file-walk.ts";
import { git } from "../../src/worktrees/git.ts";
import { GitWorktrees } from "../../src/worktrees/worktrees.ts";
import { MergeConflictError, MergeRefusedError, WorktreeUnavailableError } from "../../src/worktrees/worktree-errors.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A repository with one commit (notes.txt), its identity configured locally. */
async function repository(): Promise<string> {
  const dir = tempDir("agent-worktrees-");
  const run = async (...args: string[]) => {
    const result = await git(dir, args);
    if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  await run("init", "--quiet", "--initial-branch=main");
  await run("config", "user.name", "Test User");
  await run("config", "user.email", "test@example.invalid");
  writeFileSync(join(dir, "notes.txt"), "one\ntwo\nthree\n");
  await run("add", "notes.txt");
  await run("commit", "--quiet", "-m", "start");
  return dir;
}

async function out(cwd: string, ...args: string[]): Promise<string> {
  const result = await git(cwd, args);
  expect(result.code).toBe(0);
  return result.stdout.trim();
}

describe("GitWorktrees", () => {
  test("a workspace outside git cannot have worktrees, with a one-line reason naming the fix", async () => {
    const dir = tempDir("agent-no-git-");
    const opened = await GitWorktrees.open(dir, "s1");
    expect("problem" in opened).toBe(true);
    const error = await GitWorktrees.require(dir, "s1").catch((e) => e);
    expect(error).toBeInstanceOf(WorktreeUnavailableError);
    expect(error.code).toBe("WORKTREE_UNAVAILABLE");
    expect(error.message).toContain("git init");
    expect(error.message).not.toContain("\n");
  });

  test("a repository without a commit is refused: there is nothing to branch from", async () => {
    const dir = tempDir("agent-empty-git-");
    await out(dir, "init", "--quiet");
    const worktrees = await GitWorktrees.require(dir, "s1");
    const error = await worktrees.create("alice").catch((e) => e);
    expect(error).toBeInstanceOf(WorktreeUnavailableError);
    expect(error.message).toContain("commit once");
  });

  test("create: its own branch agent/<session>/<name> from HEAD, under .agent/worktrees, ignored by the Lead's git status", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    expect(alice.branch).toBe("agent/s1/alice");
    expect(alice.path).toBe(join(dir, ".agent", "worktrees", "s1", "alice"));
    expect(alice.workspace).toBe(alice.path);
    expect(alice.base).toBe(await out(dir, "rev-parse", "HEAD"));
    expect(await out(alice.path, "symbolic-ref", "--short", "HEAD")).toBe("agent/s1/alice");
    expect(readFileSync(join(alice.path, "notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
    expect(await out(dir, "status", "--porcelain")).toBe("");
    expect(await worktrees.diffStat(alice)).toBe("no changes");
    // The Lead's glob and grep skip them too (they read the same .gitignore files), hidden files included.
    const walked: string[] = [];
    const walk = walkFiles({ workspace: dir, start: dir, respectIgnore: true, includeHidden: true, protectedRoots: [], signal: new AbortController().signal });
    for await (const file of walk) walked.push(file.path);
    expect(walked).toContain("notes.txt");
    expect(walked.filter((path) => path.includes("worktrees"))).toEqual([]);
  });

  test("a workspace in a subdirectory of the repository: the teammate's workspace is the same subdirectory of its worktree", async () => {
    const dir = await repository();
    mkdirSync(join(dir, "app"));
    writeFileSync(join(dir, "app", "main.ts"), "export {};\n");
    await out(dir, "add", "app");
    await out(dir, "commit", "--quiet", "-m", "app");
    const worktrees = await GitWorktrees.require(join(dir, "app"), "s1");
    const alice = await worktrees.create("alice");
    expect(alice.path).toBe(join(dir, "app", ".agent", "worktrees", "s1", "alice"));
    expect(alice.workspace).toBe(join(alice.path, "app"));
    expect(existsSync(join(alice.workspace, "main.ts"))).toBe(true);
  });

  test("commitPending commits new and changed files as the teammate, and the diff stat counts from the base", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    expect(await worktrees.commitPending(alice, "alice", "nothing")).toBe(false);
    writeFileSync(join(alice.path, "notes.txt"), "one\nTWO\nthree\n");
    writeFileSync(join(alice.path, "added.txt"), "new\n");
    expect(await worktrees.commitPending(alice, "alice", "alice: turn")).toBe(true);
    expect(await out(alice.path, "log", "-1", "--format=%an <%ae> %s")).toBe("alice <alice@agent.invalid> alice: turn");
    const stat = await worktrees.diffStat(alice);
    expect(stat).toContain("added.txt");
    expect(stat).toContain("notes.txt");
    expect(stat).toContain("2 files changed, 2 insertions(+), 1 deletion(-)");
    // The Lead's tree does not see it until merged.
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
  });

  test("merge: the first branch goes in with a merge commit; the second, editing the same line, conflicts and leaves no half-merge", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    const bob = await worktrees.create("bob");
    writeFileSync(join(alice.path, "notes.txt"), "one\nalice\nthree\n");
    // bob's change is left uncommitted: merge commits it first.
    writeFileSync(join(bob.path, "notes.txt"), "one\nbob\nthree\n");
    await worktrees.commitPending(alice, "alice", "alice: turn");

    const first = await worktrees.merge(alice, "alice");
    expect(first).toMatchObject({ branch: "agent/s1/alice", into: "main", committedPending: false });
    expect(first.stat).toContain("notes.txt");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("one\nalice\nthree\n");
    expect(await out(dir, "log", "-1", "--format=%s")).toBe("Merge teammate alice (agent/s1/alice)");
    expect(await out(dir, "rev-parse", "--short", "HEAD")).toBe(first.commit!);

    const head = await out(dir, "rev-parse", "HEAD");
    const error = await worktrees.merge(bob, "bob").catch((e) => e);
    expect(error).toBeInstanceOf(MergeConflictError);
    expect(error.code).toBe("MERGE_CONFLICT");
    expect(error.files).toEqual(["notes.txt"]);
    expect(error.message).toContain("aborted");
    expect(await out(dir, "status", "--porcelain")).toBe("");
    expect((await git(dir, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"])).code).not.toBe(0);
    expect(await out(dir, "rev-parse", "HEAD")).toBe(head);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("one\nalice\nthree\n");
    // bob's uncommitted work was committed to its branch before the attempt, not lost.
    expect(await out(bob.path, "status", "--porcelain")).toBe("");
    expect(await out(dir, "show", "agent/s1/bob:notes.txt")).toBe("one\nbob\nthree");
  });

  test("merge is refused before anything happens when the Lead's tree has uncommitted changes or HEAD is detached", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    writeFileSync(join(alice.path, "other.txt"), "x\n");
    writeFileSync(join(dir, "notes.txt"), "edited by the user\n");
    const dirty = await worktrees.merge(alice, "alice").catch((e) => e);
    expect(dirty).toBeInstanceOf(MergeRefusedError);
    expect(dirty.message).toContain("uncommitted changes (notes.txt)");
    expect(dirty.message).toContain("commit or stash");
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("edited by the user\n");
    // Refused before the teammate's work was touched.
    expect(await out(alice.path, "status", "--porcelain")).toBe("?? other.txt");

    await out(dir, "checkout", "--quiet", "notes.txt");
    await out(dir, "checkout", "--quiet", "--detach");
    const detached = await worktrees.merge(alice, "alice").catch((e) => e);
    expect(detached).toBeInstanceOf(MergeRefusedError);
    expect(detached.message).toContain("detached HEAD");
  });

  test("a branch with nothing new is nothing to merge", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    const head = await out(dir, "rev-parse", "HEAD");
    const outcome = await worktrees.merge(alice, "alice");
    expect(outcome.commit).toBeUndefined();
    expect(outcome.stat).toContain("nothing to merge");
    expect(await out(dir, "rev-parse", "HEAD")).toBe(head);
  });

  test("ensure puts back a deleted worktree from its branch; the same name created again gets its branch back", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    writeFileSync(join(alice.path, "kept.txt"), "kept\n");
    await worktrees.commitPending(alice, "alice", "alice: turn");
    rmSync(alice.path, { recursive: true, force: true });
    await worktrees.ensure(alice);
    expect(readFileSync(join(alice.path, "kept.txt"), "utf8")).toBe("kept\n");
    const again = await worktrees.create("alice");
    expect(again).toEqual(alice);
  });

  test("remove commits what is uncommitted, removes the worktree and keeps the branch", async () => {
    const dir = await repository();
    const worktrees = await GitWorktrees.require(dir, "s1");
    const alice = await worktrees.create("alice");
    writeFileSync(join(alice.path, "late.txt"), "late\n");
    const removed = await worktrees.remove(alice, "alice");
    expect(removed).toEqual({ branch: "agent/s1/alice", committedPending: true, unmerged: 1 });
    expect(existsSync(alice.path)).toBe(false);
    expect(await out(dir, "worktree", "list", "--porcelain")).not.toContain(alice.path);
    expect(await out(dir, "show", "agent/s1/alice:late.txt")).toBe("late");
    const missing = await worktrees.ensure({ ...alice, branch: "agent/s1/nobody" }).catch((e) => e);
    expect(missing).toBeInstanceOf(WorktreeUnavailableError);
  });
});
