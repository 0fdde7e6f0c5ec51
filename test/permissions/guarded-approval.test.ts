import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PermissionMode } from "../../src/config/config.ts";
import type { Tool, ToolContext } from "../../src/core/tool.ts";
import { type PermissionAsker, PermissionPolicy } from "../../src/permissions/policy.ts";
import { ProtectedPaths } from "../../src/security/protected-paths.ts";
import { expandWorkspaceVariables } from "../../src/security/workspace-variables.ts";
import { editFileTool } from "../../src/tools/edit-file.ts";
import { shellTool } from "../../src/tools/shell.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { tempDir } from "../support/temp-dir.ts";

// Who may approve a guarded write (docs/security.md#1-protected-paths): a person
// at the terminal, or an allow rule naming the path — in every mode. A
// PreToolUse hook's allow answers the ordinary question only: the model may
// have rewritten the hook's script.

const HOOK = 'sh "$(pwd)/hooks/policy.sh"';

function world() {
  const workspace = realpathSync(tempDir("agent-guarded-approval-"));
  mkdirSync(join(workspace, "hooks"));
  writeFileSync(join(workspace, "hooks", "policy.sh"), "exit 0\n");
  const fence = new ProtectedPaths({ workspace, stateRoot: join(workspace, ".agent", "state"), agentDir: join(workspace, ".agent"), hookCommands: [HOOK] });
  const context: ToolContext = { identity: "lead", idempotencyKey: "k", workspace, signal: new AbortController().signal, fence };
  const hookAllows: ToolContext = { ...context, hookPermission: { decision: "allow" } };
  const policy = (mode: PermissionMode, allow: string[] = [], ask?: PermissionAsker) => new PermissionPolicy({ mode, allow, protected: fence, ...(ask ? { ask } : {}) });
  return { workspace, fence, context, hookAllows, policy };
}

const write = writeFileTool() as Tool;
const edit = editFileTool() as Tool;
const shell = shellTool() as Tool;
const gitConfig = { path: ".git/config", old_string: "[core]", new_string: "[core]\n\tfsmonitor = x" };

describe("a guarded write", () => {
  test("a hook's allow does not approve it headless, in any mode; it still approves an ordinary write", async () => {
    const { policy, hookAllows } = world();
    for (const mode of ["default", "acceptEdits", "bypassPermissions"] as const) {
      const decision = await policy(mode).decide(edit, gitConfig, hookAllows);
      expect(decision).toMatchObject({ behavior: "deny" });
      expect(decision.behavior === "deny" && decision.reason).toContain("a PreToolUse hook's allow does not approve a guarded write");
      expect((await policy(mode).decide(shell, { command: "echo x > .git/config" }, hookAllows)).behavior).toBe("deny");
    }
    expect((await policy("default").decide(write, { path: "src/a.ts", content: "" }, hookAllows)).behavior).toBe("allow");
    expect((await policy("default").decide(shell, { command: "echo x > notes.txt" }, hookAllows)).behavior).toBe("allow");
  });

  test("an allow rule naming the path approves it, in bypassPermissions too; a bare rule does not", async () => {
    const { policy, context } = world();
    expect((await policy("bypassPermissions").decide(edit, gitConfig, context)).behavior).toBe("deny");
    expect((await policy("bypassPermissions", ["edit_file"]).decide(edit, gitConfig, context)).behavior).toBe("deny");
    expect((await policy("bypassPermissions", ["edit_file(.git/config)"]).decide(edit, gitConfig, context)).behavior).toBe("allow");
    expect((await policy("bypassPermissions").decide(shell, { command: "echo x > .git/config" }, context)).behavior).toBe("deny");
    expect((await policy("bypassPermissions").decide(shell, { command: "echo x > notes.txt" }, context)).behavior).toBe("allow");
  });

  test("a person at the terminal approves it, and is asked even when a hook said allow", async () => {
    const { policy, hookAllows } = world();
    const asked: string[] = [];
    const yes: PermissionAsker = async (request) => {
      asked.push(`${request.tool}(${request.subject}) ${request.why}`);
      return true;
    };
    expect((await policy("bypassPermissions", [], yes).decide(edit, gitConfig, hookAllows)).behavior).toBe("allow");
    expect(asked).toEqual(["edit_file(.git/config) it writes git's own files (.git/**), which git runs or follows"]);
  });

  test("the script a hook names through $(pwd), $PWD or $CLAUDE_PROJECT_DIR is guarded, not /hooks/…", () => {
    const { workspace, fence } = world();
    expect(fence.guardedWrite(join(workspace, "hooks", "policy.sh"))).toBe("a file a configured hook runs");
    for (const command of ['sh "$(pwd)/hooks/x.sh"', "sh `pwd`/hooks/x.sh", "$PWD/hooks/x.sh --fast", 'bash "${CLAUDE_PROJECT_DIR}/hooks/x.sh"', "$CLAUDE_PROJECT_DIR/hooks/x.sh"]) {
      expect(expandWorkspaceVariables(command, "/ws")).toContain("/ws/hooks/x.sh");
      const named = new ProtectedPaths({ workspace, stateRoot: join(workspace, ".agent", "state"), agentDir: join(workspace, ".agent"), hookCommands: [command] });
      expect(`${command}: ${named.guardedWrite(join(workspace, "hooks", "x.sh"))}`).toBe(`${command}: a file a configured hook runs`);
    }
    // Only those names: $PWDX is another variable.
    expect(expandWorkspaceVariables("$PWDX/a", "/ws")).toBe("$PWDX/a");
  });
});

describe("Claude Code's `Bash` rule (--allowedTools Bash)", () => {
  test("allows a line and what it writes; guarded files, the state, edit deny rules and plan mode still hold; `shell` does not allow the write", async () => {
    const { workspace, fence, context } = world();
    const policy = (mode: PermissionMode, allow: string[], deny: string[] = []) => new PermissionPolicy({ mode, allow, deny, protected: fence });
    const run = (command: string) => ({ command });
    expect((await policy("default", ["Bash"]).decide(shell, run("echo hi > s.txt && rm -f old.txt"), context)).behavior).toBe("allow");
    expect((await policy("default", ["Bash(*)"]).decide(shell, run("echo hi > s.txt"), context)).behavior).toBe("allow");
    expect((await policy("default", ["shell"]).decide(shell, run("echo hi > s.txt"), context)).behavior).toBe("deny");
    expect((await policy("default", ["Bash"]).decide(shell, run("echo x > .git/config"), context)).behavior).toBe("deny");
    expect((await policy("default", ["Bash"]).decide(shell, run(`echo x > ${join(workspace, ".agent", "state", "x")}`), context)).behavior).toBe("deny");
    expect((await policy("default", ["Bash"], ["edit(.env)"]).decide(shell, run("echo x > .env"), context)).behavior).toBe("deny");
    expect((await policy("plan", ["Bash"]).decide(shell, run("echo hi > s.txt"), context)).behavior).toBe("deny");
    // Its own deny is the whole shell, as `shell` is.
    expect(new PermissionPolicy({ mode: "default", deny: ["Bash"] }).deniesWhole("shell")).toBe(true);
  });
});
