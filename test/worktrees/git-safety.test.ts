import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSandbox } from "../../src/security/sandbox/sandbox.ts";
import { git, gitEnv } from "../../src/worktrees/git.ts";
import { executableSetting, parseConfigList } from "../../src/worktrees/git-safety.ts";
import { UnsafeRepositoryError } from "../../src/worktrees/worktree-errors.ts";
import { GitWorktrees } from "../../src/worktrees/worktrees.ts";
import { tempDir } from "../support/temp-dir.ts";

// The runtime's own git against a repository the model could write: executable
// settings in its config and a `.git` pointer moved elsewhere are refused before
// git runs (nothing of theirs runs, in or out of the sandbox); git itself runs in
// the sandbox with the repository writable and nothing else, and sees no key.

async function repository(): Promise<string> {
  const dir = tempDir("agent-git-safety-");
  for (const args of [["init", "--quiet", "--initial-branch=main"], ["config", "user.name", "Test User"], ["config", "user.email", "test@example.invalid"]]) {
    expect((await git(dir, args)).code).toBe(0);
  }
  writeFileSync(join(dir, "notes.txt"), "one\n");
  expect((await git(dir, ["add", "notes.txt"])).code).toBe(0);
  expect((await git(dir, ["commit", "--quiet", "-m", "start"])).code).toBe(0);
  return dir;
}

function sandboxFor(workspace: string) {
  const agentDir = join(workspace, ".agent");
  const { sandbox } = resolveSandbox({ explicit: true, network: false, workspace, agentDir, stateRoot: join(agentDir, "state") });
  expect(sandbox.status).toBe("bubblewrap");
  return sandbox;
}

describe("the runtime's git", () => {
  test("executable settings are recognised by their shape; ordinary ones pass", () => {
    const refused = [
      ["core.fsmonitor", "touch /tmp/x"],
      ["core.sshcommand", "sh -c x"],
      ["filter.lfs.process", "x"],
      ["filter.evil.smudge", "x"],
      ["diff.evil.textconv", "x"],
      ["merge.evil.driver", "x %A"],
      ["alias.st", "!touch x"],
      ["include.path", "../evil"],
      ["includeif.gitdir:/.path", "evil"],
      ["core.pager", "less; touch x"],
      ["core.worktree", "/elsewhere"],
      ["gpg.program", "x"],
      ["credential.helper", "x"],
      ["uploadpack.packobjectshook", "x"],
    ];
    for (const [key, value] of refused) expect(executableSetting({ scope: "local", origin: "file:.git/config", key: key!, value: value! })).toBeDefined();
    const fine = [
      ["core.fsmonitor", "false"],
      ["core.bare", "false"],
      ["remote.origin.url", "git@example.com:x.git"],
      ["branch.main.remote", "origin"],
      ["alias.st", "status"],
      ["user.name", "x"],
    ];
    for (const [key, value] of fine) expect(executableSetting({ scope: "local", origin: "file:.git/config", key: key!, value: value! })).toBeUndefined();
    expect(parseConfigList("local\0file:.git/config\0core.bare\nfalse\0local\0file:.git/config\0core.fsmonitor\0")).toEqual([
      { scope: "local", origin: "file:.git/config", key: "core.bare", value: "false" },
      { scope: "local", origin: "file:.git/config", key: "core.fsmonitor" },
    ]);
  });

  test("core.fsmonitor in the repository's config: every operation is refused with one line, and the program never runs", async () => {
    const dir = await repository();
    const marker = join(tempDir("agent-git-outside-"), "pwned");
    const worktrees = await GitWorktrees.require(dir, "s1", sandboxFor(dir));
    const alice = await worktrees.create("alice");
    writeFileSync(join(alice.path, "new.txt"), "x\n");
    writeFileSync(join(dir, ".git", "config"), `${readFileSync(join(dir, ".git", "config"), "utf8")}[core]\n\tfsmonitor = "touch ${marker}"\n`);
    const error = await worktrees.commitPending(alice, "alice", "work").catch((e) => e);
    expect(error).toBeInstanceOf(UnsafeRepositoryError);
    expect(error.code).toBe("UNSAFE_REPOSITORY");
    expect(error.message).toContain("sets core.fsmonitor");
    expect(error.message).not.toContain("\n");
    expect(await worktrees.merge(alice, "alice").catch((e) => e)).toBeInstanceOf(UnsafeRepositoryError);
    expect(existsSync(marker)).toBe(false);
  });

  test("config git reads from a file the check did not name (.git/commondir pointing elsewhere) is still refused: git itself lists it", async () => {
    const dir = await repository();
    const marker = join(tempDir("agent-git-outside-"), "pwned");
    const worktrees = await GitWorktrees.require(dir, "s1", sandboxFor(dir));
    const elsewhere = join(dir, "elsewhere");
    for (const sub of ["objects", "refs/heads"]) mkdirSync(join(elsewhere, sub), { recursive: true });
    writeFileSync(join(elsewhere, "config"), `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}"\n`);
    writeFileSync(join(dir, ".git", "commondir"), "../elsewhere\n");
    const error = await worktrees.create("alice").catch((e) => e);
    expect(error).toBeInstanceOf(UnsafeRepositoryError);
    expect(error.message).toContain("elsewhere/config sets core.fsmonitor");
    expect(existsSync(marker)).toBe(false);
  });

  test("a teammate's .git rewritten to point at a repository of its own is refused; its config never runs", async () => {
    const dir = await repository();
    const marker = join(tempDir("agent-git-outside-"), "pwned");
    const worktrees = await GitWorktrees.require(dir, "s1", sandboxFor(dir));
    const alice = await worktrees.create("alice");
    const evil = join(alice.path, "evilgit");
    mkdirSync(join(evil, "objects"), { recursive: true });
    mkdirSync(join(evil, "refs"), { recursive: true });
    writeFileSync(join(evil, "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(evil, "config"), `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}"\n`);
    writeFileSync(join(alice.path, ".git"), "gitdir: evilgit\n");
    const error = await worktrees.commitPending(alice, "alice", "work").catch((e) => e);
    expect(error).toBeInstanceOf(UnsafeRepositoryError);
    expect(error.message).toMatch(/its \.git points at evilgit, outside .*worktrees; remove the worktree/);
    expect(existsSync(marker)).toBe(false);
  });

  test("git runs in the sandbox: it can commit in the worktree, but nothing outside the repository is writable and no key is in its environment", async () => {
    const dir = await repository();
    const sandbox = sandboxFor(dir);
    const worktrees = await GitWorktrees.require(dir, "s1", sandbox);
    const alice = await worktrees.create("alice");
    writeFileSync(join(alice.path, "new.txt"), "x\n");
    expect(await worktrees.commitPending(alice, "alice", "work")).toBe(true);
    expect((await worktrees.merge(alice, "alice")).commit).toMatch(/^[0-9a-f]+$/);
    // The same launch and environment, running a program instead of git: what a setting that slipped through would get.
    const outside = tempDir("agent-git-outside-");
    const argv = sandbox.wrap(["sh", "-c", `env; touch ${join(outside, "w")} 2>&1; touch .git/config 2>&1; echo done`], dir, {
      writable: [dir],
      readOnly: [join(dir, ".git", "config")],
    });
    const parent = { ...process.env, OPENAI_API_KEY: "sk-test-secret-in-parent", GIT_CONFIG_COUNT: "1" };
    const child = Bun.spawnSync(argv, { cwd: dir, env: gitEnv({}, parent), stdout: "pipe" });
    const output = child.stdout.toString();
    expect(output).toContain("done");
    expect(output).not.toContain("sk-test-secret-in-parent");
    expect(output).not.toContain("GIT_CONFIG_COUNT");
    expect(output).toContain("GIT_CONFIG_NOSYSTEM=1");
    expect(output).toContain("Read-only file system");
    expect(existsSync(join(outside, "w"))).toBe(false);
  });
});
