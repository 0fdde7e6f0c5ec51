import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/core/errors.ts";
import { type PermissionAnswer, type PermissionAsker, PermissionPolicy, type PermissionRequest } from "../../src/permissions/policy.ts";
import { editFileTool } from "../../src/tools/edit-file.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import { shellTool } from "../../src/tools/shell.ts";
import type { Tool, ToolContext } from "../../src/core/tool.ts";

const context: ToolContext = {
  identity: "lead",
  idempotencyKey: "k",
  workspace: "/ws",
  signal: new AbortController().signal,
};
const read = readFileTool() as Tool;
const edit = editFileTool() as Tool;
const shell = shellTool() as Tool;
const calls: Array<[Tool, unknown]> = [
  [read, { path: "src/a.ts" }],
  [edit, { path: "src/a.ts", old_string: "a", new_string: "b" }],
  [shell, { command: "npm test" }],
];

/** An asker answering `answer` and recording what it was asked. */
function asker(answer: boolean) {
  const asked: PermissionRequest[] = [];
  const ask: PermissionAsker = async (request) => {
    asked.push(request);
    return answer;
  };
  return { ask, asked };
}

async function outcomes(policy: PermissionPolicy): Promise<string[]> {
  const results = [];
  for (const [tool, input] of calls) {
    const decision = await policy.decide(tool, input, context);
    results.push(decision.behavior);
  }
  return results;
}

describe("PermissionPolicy modes (read, edit, execute)", () => {
  test("default: reads run; edits and commands are asked on a TTY", async () => {
    const yes = asker(true);
    expect(await outcomes(new PermissionPolicy({ mode: "default", ask: yes.ask }))).toEqual(["allow", "allow", "allow"]);
    expect(yes.asked.map((request) => request.subject)).toEqual(["src/a.ts", "npm test"]);
    expect(yes.asked[1]).toEqual({
      tool: "shell",
      effect: "execute",
      subject: "npm test",
      identity: "lead",
      input: { command: "npm test" },
      workspace: "/ws",
      remember: { allow: ["shell(npm test)"], deny: ["shell(npm test)"] },
    });
    const no = asker(false);
    expect(await outcomes(new PermissionPolicy({ mode: "default", ask: no.ask }))).toEqual(["allow", "deny", "deny"]);
  });

  test("default, headless: asking is a denial naming the fix", async () => {
    const policy = new PermissionPolicy({ mode: "default" });
    expect(await outcomes(policy)).toEqual(["allow", "deny", "deny"]);
    expect(await policy.decide(shell, { command: "npm test" }, context)).toEqual({
      behavior: "deny",
      reason:
        'permission denied: shell needs approval and there is no TTY to ask; allow it with permissions.allow in config.json (e.g. "shell(npm test)") or --permission-mode bypassPermissions',
    });
    const editDenial = await policy.decide(edit, calls[1]?.[1], context);
    expect(editDenial).toMatchObject({ reason: expect.stringContaining('(e.g. "edit_file(src/a.ts)") or --permission-mode acceptEdits') });
  });

  test("acceptEdits: reads and edits run; commands are asked", async () => {
    const no = asker(false);
    expect(await outcomes(new PermissionPolicy({ mode: "acceptEdits", ask: no.ask }))).toEqual(["allow", "allow", "deny"]);
    expect(no.asked.map((request) => request.tool)).toEqual(["shell"]);
  });

  test("plan: read-only, nobody is asked", async () => {
    const yes = asker(true);
    const policy = new PermissionPolicy({ mode: "plan", ask: yes.ask });
    expect(await outcomes(policy)).toEqual(["allow", "deny", "deny"]);
    expect(yes.asked).toEqual([]);
    expect(await policy.decide(shell, { command: "ls" }, context)).toMatchObject({
      reason: expect.stringMatching(/^plan mode is read-only: shell \(execute\) is not allowed/),
    });
  });

  test("bypassPermissions: everything runs", async () => {
    expect(await outcomes(new PermissionPolicy({ mode: "bypassPermissions" }))).toEqual(["allow", "allow", "allow"]);
  });
});

describe("PermissionPolicy rules", () => {
  test("an allow rule lets a matching call run without asking, in any mode", async () => {
    const policy = new PermissionPolicy({ mode: "plan", allow: ["shell(git status*)", "edit_file(src/**)"] });
    expect(await policy.decide(shell, { command: "git status --short" }, context)).toEqual({ behavior: "allow" });
    expect(await policy.decide(shell, { command: "git push" }, context)).toMatchObject({ behavior: "deny" });
    const input = (path: string) => ({ path, old_string: "a", new_string: "b" });
    expect(await policy.decide(edit, input("./src/x/../a.ts"), context)).toEqual({ behavior: "allow" });
    expect(await policy.decide(edit, input("/ws/src/a.ts"), context)).toEqual({ behavior: "allow" });
    expect(await policy.decide(edit, input("src/../b.ts"), context)).toMatchObject({ behavior: "deny" });
  });

  test("a deny rule wins over allow rules and bypassPermissions, however the path is spelled", async () => {
    const policy = new PermissionPolicy({ mode: "bypassPermissions", allow: ["read_file"], deny: ["read_file(**/.env)", "shell(rm *)"] });
    expect(await policy.decide(read, { path: "/ws/config/.env" }, context)).toEqual({
      behavior: "deny",
      reason: 'permission denied: read_file(config/.env) matches the deny rule "read_file(**/.env)"',
    });
    expect(await policy.decide(read, { path: "./.env" }, context)).toMatchObject({ behavior: "deny" });
    expect(await policy.decide(shell, { command: "rm -f a/b" }, context)).toMatchObject({ behavior: "deny" });
    expect(await policy.decide(read, { path: "README.md" }, context)).toEqual({ behavior: "allow" });
  });

  test("fromConfig: the config's rules and mode, flags first", async () => {
    const config = { permissionMode: "plan" as const, permissions: { allow: ["shell(ls*)"] } };
    expect(PermissionPolicy.fromConfig(config).mode).toBe("plan");
    const policy = PermissionPolicy.fromConfig(config, { mode: "default", deny: ["shell(ls -la*)"] });
    expect(policy.mode).toBe("default");
    expect(await policy.decide(shell, { command: "ls src" }, context)).toEqual({ behavior: "allow" });
    expect(await policy.decide(shell, { command: "ls -la" }, context)).toMatchObject({ behavior: "deny" });
  });

  test("a malformed rule fails at construction", () => {
    expect(() => new PermissionPolicy({ mode: "default", allow: ["shell(ls"] })).toThrow(ConfigError);
  });

  test("an asker that fails is a denial, not a throw", async () => {
    const policy = new PermissionPolicy({
      mode: "default",
      ask: async () => {
        throw new Error("stdin closed");
      },
    });
    expect(await policy.decide(shell, { command: "ls" }, context)).toEqual({
      behavior: "deny",
      reason: "permission denied: could not ask for approval of shell (stdin closed)",
    });
  });
});

describe("PermissionPolicy: answers that last the session", () => {
  /** An asker giving the answers in order, recording what it was asked. */
  function answering(...answers: PermissionAnswer[]) {
    const asked: PermissionRequest[] = [];
    const ask: PermissionAsker = async (request) => {
      asked.push(request);
      return answers.shift() ?? { answer: "no" };
    };
    return { ask, asked };
  }

  test("always: the allow rule is added through the policy, and the same call is not asked again", async () => {
    const person = answering({ answer: "always" });
    const policy = new PermissionPolicy({ mode: "default", ask: person.ask, allow: ["read_file"] });
    expect(await policy.decide(shell, { command: "npm test && git status" }, context)).toEqual({ behavior: "allow" });
    expect(await policy.decide(shell, { command: "git status" }, context)).toEqual({ behavior: "allow" });
    expect(person.asked).toHaveLength(1);
    expect(policy.rules()).toEqual({
      allow: ["read_file"],
      deny: [],
      session: { allow: ["shell(npm test)", "shell(git status)"], deny: [] },
    });
    // Another command is still asked.
    expect((await policy.decide(shell, { command: "rm -r build" }, context)).behavior).toBe("deny");
    expect(person.asked).toHaveLength(2);
  });

  test("never: a deny rule, and the next identical call is denied without asking", async () => {
    const person = answering({ answer: "never" });
    const policy = new PermissionPolicy({ mode: "default", ask: person.ask });
    const first = await policy.decide(edit, { path: "src/[a].ts", old_string: "a", new_string: "b" }, context);
    expect(first).toEqual({ behavior: "deny", reason: "permission denied by the user for edit_file(src/[a].ts), for the rest of this session" });
    const second = await policy.decide(edit, { path: "./src/[a].ts", old_string: "x", new_string: "y" }, context);
    expect(second).toEqual({ behavior: "deny", reason: 'permission denied: edit_file(src/[a].ts) matches the deny rule "edit_file(src/\\[a\\].ts)"' });
    expect(person.asked).toHaveLength(1);
    // The glob characters are escaped: src/a.ts is not covered.
    expect((await policy.decide(edit, { path: "src/a.ts", old_string: "a", new_string: "b" }, context)).behavior).toBe("deny");
    expect(person.asked).toHaveLength(2);
  });

  test("a no with a reason gives the model the reason", async () => {
    const person = answering({ answer: "no", reason: "use bun test" });
    const policy = new PermissionPolicy({ mode: "default", ask: person.ask });
    expect(await policy.decide(shell, { command: "npm test" }, context)).toEqual({
      behavior: "deny",
      reason: "permission denied by the user for shell(npm test); the user says: use bun test",
    });
    expect(policy.rules().session).toEqual({ allow: [], deny: [] });
  });
});

describe("withMode", () => {
  test("another mode over the same rules; answers added later reach both", async () => {
    const policy = new PermissionPolicy({ mode: "acceptEdits", deny: ["shell(rm *)"] });
    const plan = policy.withMode("plan");
    expect(plan.mode).toBe("plan");
    expect(await outcomes(policy)).toEqual(["allow", "allow", "deny"]);
    expect(await outcomes(plan)).toEqual(["allow", "deny", "deny"]);
    expect((await plan.decide(shell, { command: "rm -rf x" }, context)).behavior).toBe("deny");
    policy.addSessionRules("allow", ["shell(npm test)"]);
    expect(plan.rules()).toEqual({ allow: [], deny: ["shell(rm *)"], session: { allow: ["shell(npm test)"], deny: [] } });
    expect((await policy.withMode("acceptEdits").decide(shell, { command: "npm test" }, context)).behavior).toBe("allow");
  });
});

describe("a line the deny rules cannot check", () => {
  test("headless it is denied naming the deny rule; a PreToolUse hook's allow answers for the person", async () => {
    const policy = new PermissionPolicy({ mode: "bypassPermissions", deny: ["shell(rm*)"] });
    const denied = await policy.decide(shell, { command: "$(echo rm) -rf x" }, context);
    expect(denied).toMatchObject({ behavior: "deny", reason: expect.stringContaining('cannot be checked against the deny rule "shell(rm*)"') });
    const hooked = await policy.decide(shell, { command: "$(echo rm) -rf x" }, { ...context, hookPermission: { decision: "allow" } });
    expect(hooked).toEqual({ behavior: "allow" });
  });
});
