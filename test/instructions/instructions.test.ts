import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { environmentFacts } from "../../src/instructions/environment.ts";
import { contextSections } from "../../src/instructions/prompt-context.ts";
import { INSTRUCTIONS_MAX_BYTES, readInstructionChain, readProjectInstructions } from "../../src/instructions/project-instructions.ts";
import { NestedInstructions } from "../../src/instructions/nested-instructions.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("project instructions", () => {
  test("AGENTS.md first, else CLAUDE.md, else none", () => {
    const ws = tempDir();
    expect(readProjectInstructions(ws)).toBeUndefined();
    writeFileSync(join(ws, "CLAUDE.md"), "claude");
    expect(readProjectInstructions(ws)).toEqual({ file: "CLAUDE.md", text: "claude", scope: "project" });
    writeFileSync(join(ws, "AGENTS.md"), "agents");
    expect(readProjectInstructions(ws)).toEqual({ file: "AGENTS.md", text: "agents", scope: "project" });
  });

  test("cut at 32 KB on a character boundary, with the size noted", () => {
    const ws = tempDir();
    // "é" is two bytes: an odd prefix puts one across the limit.
    const text = `a${"é".repeat(INSTRUCTIONS_MAX_BYTES)}`;
    writeFileSync(join(ws, "AGENTS.md"), text);
    const read = readProjectInstructions(ws)!;
    expect(read.cutFromBytes).toBe(1 + 2 * INSTRUCTIONS_MAX_BYTES);
    expect(Buffer.byteLength(read.text)).toBe(INSTRUCTIONS_MAX_BYTES - 1);
    expect(read.text).not.toContain("\uFFFD");
    expect(contextSections({ instructions: [read], environment: environmentFacts(ws, new ManualClock()) })).toContain(
      `[AGENTS.md is ${1 + 2 * INSTRUCTIONS_MAX_BYTES} bytes: only its first ${INSTRUCTIONS_MAX_BYTES} are included here; read the file for the rest]`,
    );
  });
});

describe("the instructions chain", () => {
  test("the user's AGENTS.md, then AGENTS.md (else CLAUDE.md) of each directory from the root down to where the user is", () => {
    const ws = realpathSync(tempDir());
    const user = tempDir();
    writeFileSync(join(user, "AGENTS.md"), "mine");
    mkdirSync(join(ws, "pkg", "api"), { recursive: true });
    mkdirSync(join(ws, "other"));
    writeFileSync(join(ws, "AGENTS.md"), "root");
    writeFileSync(join(ws, "pkg", "CLAUDE.md"), "pkg claude");
    writeFileSync(join(ws, "pkg", "api", "AGENTS.md"), "api");
    writeFileSync(join(ws, "other", "AGENTS.md"), "not on the way");
    const chain = readInstructionChain(ws, "pkg/api", user);
    expect(chain.map(({ file, text, scope }) => ({ file, text, scope }))).toEqual([
      { file: join(user, "AGENTS.md"), text: "mine", scope: "user" },
      { file: "AGENTS.md", text: "root", scope: "project" },
      { file: "pkg/CLAUDE.md", text: "pkg claude", scope: "project" },
      { file: "pkg/api/AGENTS.md", text: "api", scope: "project" },
    ]);
    const sections = contextSections({ instructions: chain, environment: environmentFacts(ws, new ManualClock()), startDir: "pkg/api" });
    expect(sections.indexOf("<user-instructions")).toBeLessThan(sections.indexOf('<project-instructions file="AGENTS.md">'));
    expect(sections.indexOf('file="AGENTS.md"')).toBeLessThan(sections.indexOf('file="pkg/api/AGENTS.md"'));
    expect(sections).toContain("The user is in: pkg/api/ (start there)");
  });

  test("an AGENTS.md that is a symlink out of the workspace is not read", () => {
    const ws = realpathSync(tempDir());
    const outside = tempDir();
    writeFileSync(join(outside, "secret"), "private");
    symlinkSync(join(outside, "secret"), join(ws, "AGENTS.md"));
    writeFileSync(join(ws, "CLAUDE.md"), "the fallback");
    expect(readInstructionChain(ws, "", undefined).map((file) => file.text)).toEqual(["the fallback"]);
  });

  test("nested: a first read under a directory gives its AGENTS.md once per agent; the chain's are never repeated", () => {
    const ws = realpathSync(tempDir());
    mkdirSync(join(ws, "pkg", "deep"), { recursive: true });
    writeFileSync(join(ws, "AGENTS.md"), "root");
    writeFileSync(join(ws, "pkg", "AGENTS.md"), "pkg rules");
    writeFileSync(join(ws, "pkg", "deep", "CLAUDE.md"), "deep rules");
    const nested = new NestedInstructions("");
    const context = (identity: string) => ({ identity, idempotencyKey: "k", workspace: ws, signal: new AbortController().signal });
    const first = nested.after("read_file", { path: "pkg/deep/x.ts" }, context("lead"))!;
    expect(first).toContain('<project-instructions file="pkg/AGENTS.md">\npkg rules\n</project-instructions>');
    expect(first).toContain('<project-instructions file="pkg/deep/CLAUDE.md">\ndeep rules');
    expect(first).not.toContain(">\nroot\n");
    expect(nested.after("read_file", { path: "pkg/y.ts" }, context("lead"))).toBeUndefined();
    expect(nested.after("read_file", { path: join(ws, "pkg/y.ts") }, context("alice"))).toContain("pkg rules");
    expect(nested.after("glob", { path: "pkg" }, context("bob"))).toBeUndefined();
    expect(nested.after("read_file", { path: "../elsewhere/a" }, context("bob"))).toBeUndefined();
  });
});

describe("environment facts", () => {
  test("the date from the clock, the platform, and no git repository", () => {
    const ws = tempDir();
    const facts = environmentFacts(ws, new ManualClock("2026-03-04T12:00:00"), "darwin");
    expect(facts).toEqual({ platform: "darwin", date: "2026-03-04", git: { repository: false } });
    expect(contextSections({ environment: facts })).toBe(
      "<environment>\nWorking directory: . (the workspace)\nPlatform: darwin\nToday's date: 2026-03-04\nGit repository: no\n</environment>",
    );
  });

  test("a branch, a detached HEAD, a worktree's .git file, found from a subdirectory", () => {
    const repo = tempDir();
    mkdirSync(join(repo, ".git"));
    writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    mkdirSync(join(repo, "src", "deep"), { recursive: true });
    const clock = new ManualClock();
    expect(environmentFacts(join(repo, "src", "deep"), clock).git).toEqual({ repository: true, branch: "main" });
    writeFileSync(join(repo, ".git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n");
    expect(environmentFacts(repo, clock).git).toEqual({ repository: true, detachedAt: "0123456" });

    const worktree = tempDir();
    mkdirSync(join(repo, ".git", "worktrees", "wt"), { recursive: true });
    writeFileSync(join(repo, ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/feature\n");
    writeFileSync(join(worktree, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "wt")}\n`);
    expect(environmentFacts(worktree, clock).git).toEqual({ repository: true, branch: "feature" });
    expect(contextSections({ environment: environmentFacts(worktree, clock) })).toContain("Git repository: yes, on branch feature\n");
  });
});
