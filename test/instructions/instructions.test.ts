import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { environmentFacts } from "../../src/instructions/environment.ts";
import { contextSections } from "../../src/instructions/prompt-context.ts";
import { INSTRUCTIONS_MAX_BYTES, readProjectInstructions } from "../../src/instructions/project-instructions.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("project instructions", () => {
  test("AGENTS.md first, else CLAUDE.md, else none", () => {
    const ws = tempDir();
    expect(readProjectInstructions(ws)).toBeUndefined();
    writeFileSync(join(ws, "CLAUDE.md"), "claude");
    expect(readProjectInstructions(ws)).toEqual({ file: "CLAUDE.md", text: "claude" });
    writeFileSync(join(ws, "AGENTS.md"), "agents");
    expect(readProjectInstructions(ws)).toEqual({ file: "AGENTS.md", text: "agents" });
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
    expect(contextSections({ instructions: read, environment: environmentFacts(ws, new ManualClock()) })).toContain(
      `[AGENTS.md is ${1 + 2 * INSTRUCTIONS_MAX_BYTES} bytes: only its first ${INSTRUCTIONS_MAX_BYTES} are included here; read the file for the rest]`,
    );
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
