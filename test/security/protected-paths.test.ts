import { expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { ProtectedPaths } from "../../src/security/protected-paths.ts";
import { editFileTool } from "../../src/tools/edit-file.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import { shellTool } from "../../src/tools/shell.ts";
import type { Tool, ToolContext } from "../../src/core/tool.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { tempDir } from "../support/temp-dir.ts";

function world() {
  const workspace = realpathSync(tempDir("agent-protected-"));
  const stateRoot = join(workspace, ".agent", "state");
  mkdirSync(join(stateRoot, "sessions", "s1"), { recursive: true });
  mkdirSync(join(workspace, "hooks"));
  writeFileSync(join(workspace, "hooks", "check.sh"), "exit 0\n");
  const fence = new ProtectedPaths({ workspace, stateRoot, agentDir: join(workspace, ".agent"), hookCommands: ["sh hooks/check.sh --strict", "npx prettier --check ."] });
  const context: ToolContext = { identity: "lead", idempotencyKey: "k", workspace, signal: new AbortController().signal, fence };
  return { workspace, stateRoot, fence, context };
}

test("the state root is in, by path, through .. and through a symlink; the rest of .agent/ is not", () => {
  const { workspace, stateRoot, fence } = world();
  symlinkSync(stateRoot, join(workspace, "link"));
  expect(fence.inStateRoot(join(stateRoot, "sessions", "s1", "x"))).toBe(true);
  expect(fence.inStateRoot(join(workspace, "src", "..", ".agent", "state"))).toBe(true);
  expect(fence.inStateRoot(join(workspace, "link", "sessions"))).toBe(true);
  expect(fence.inStateRoot(join(workspace, ".agent", "config.json"))).toBe(false);
  expect(() => fence.assertOutsideState("link/sessions/s1")).toThrow(/state directory/);
});

test("guarded writes: config files, agents, skills, and the files hooks run", () => {
  const { workspace, fence } = world();
  for (const path of [".agent/config.json", ".agent/config.local.json", ".agent/agents/a.md", ".agent/skills/x/SKILL.md", "skills/x/SKILL.md", "hooks/check.sh"]) {
    expect(`${path}: ${fence.guardedWrite(join(workspace, path))}`).not.toEndWith("undefined");
  }
  for (const path of ["src/a.ts", ".agent/notes.md", "README.md", "prettier"]) expect(fence.guardedWrite(join(workspace, path))).toBeUndefined();
  symlinkSync(".agent/config.json", join(workspace, "cfg"));
  expect(fence.guardedWrite(join(workspace, "cfg"))).toContain("config");
});

test("an --add-dir directory's .git and .agent config are guarded as the workspace's; its other files are not", () => {
  const { workspace, stateRoot } = world();
  const shared = realpathSync(tempDir("agent-protected-added-"));
  const fence = new ProtectedPaths({ workspace, stateRoot, agentDir: join(workspace, ".agent"), addDirs: [shared] });
  expect(fence.guardedWrite(join(shared, ".git", "config"))).toContain("git's own files");
  expect(fence.guardedWrite(join(shared, ".agent", "config.json"))).toContain("configuration");
  expect(fence.guardedWrite(join(shared, "src", "a.ts"))).toBeUndefined();
  // Without the directory added, the fence has no say there (the file tools refuse it anyway).
  const plain = new ProtectedPaths({ workspace, stateRoot, agentDir: join(workspace, ".agent") });
  expect(plain.guardedWrite(join(shared, ".git", "config"))).toBeUndefined();
});

test("git's own files are guarded: .git, everything under it, a nested repository's, and a worktree's .git pointer file", () => {
  const { workspace, fence } = world();
  for (const path of [".git", ".git/config", ".git/hooks/pre-commit", ".git/info/attributes", "vendor/lib/.git", "vendor/lib/.git/config"]) {
    expect(`${path}: ${fence.guardedWrite(join(workspace, path))}`).toContain("git's own files");
  }
  for (const path of [".gitignore", ".github/workflows/ci.yml", "src/.gitkeep"]) expect(fence.guardedWrite(join(workspace, path))).toBeUndefined();
});

test("the policy: state root refused even in bypassPermissions; guarded writes need a rule naming them, in bypassPermissions too", async () => {
  const { context } = world();
  const write = writeFileTool() as Tool;
  const read = readFileTool() as Tool;
  const edit = editFileTool() as Tool;
  const shell = shellTool() as Tool;
  const policy = (mode: "acceptEdits" | "bypassPermissions", allow: string[] = []) =>
    new PermissionPolicy({ mode, allow, protected: context.fence as ProtectedPaths });
  const decide = (p: PermissionPolicy, tool: Tool, input: unknown) => p.decide(tool, input, context).then((d) => d.behavior);

  expect(await decide(policy("bypassPermissions"), read, { path: ".agent/state/sessions/s1/x" })).toBe("deny");
  expect(await decide(policy("bypassPermissions"), shell, { command: "echo x > .agent/state/sessions/s1/m.json" })).toBe("deny");
  expect(await decide(policy("acceptEdits", ["write_file"]), write, { path: ".agent/config.json", content: "{}" })).toBe("deny");
  expect(await decide(policy("acceptEdits", ["edit_file"]), edit, { path: "hooks/check.sh", old_string: "a", new_string: "b" })).toBe("deny");
  expect(await decide(policy("acceptEdits", ["write_file(.agent/config.json)"]), write, { path: ".agent/config.json", content: "{}" })).toBe("allow");
  expect(await decide(policy("bypassPermissions"), write, { path: ".agent/config.json", content: "{}" })).toBe("deny");
  expect(await decide(policy("bypassPermissions", ["write_file(.agent/config.json)"]), write, { path: ".agent/config.json", content: "{}" })).toBe("allow");
  expect(await decide(policy("acceptEdits", ["shell(echo*)"]), shell, { command: "echo {} > .agent/config.local.json" })).toBe("deny");
  expect(await decide(policy("acceptEdits", ["shell(echo*)"]), shell, { command: "echo {} > notes.txt" })).toBe("allow");
  expect(await decide(policy("acceptEdits"), write, { path: "src/a.ts", content: "" })).toBe("allow");
});
