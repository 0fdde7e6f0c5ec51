import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigFile } from "../../src/config/config.ts";
import { ConfigError } from "../../src/core/errors.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { clearSecrets, registerSecret } from "../../src/security/redact.ts";
import { tempDir } from "../support/temp-dir.ts";

function workspace(): string {
  return realpathSync(tempDir("agent-hooks-"));
}

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("ShellHooks", () => {
  test("the event arrives as JSON on stdin, with AGENT_HOOK_EVENT, in the workspace; exit 0 continues", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({ PreToolUse: [{ command: 'cat > event.json; echo "$AGENT_HOOK_EVENT $PWD" > env.txt' }] });
    const outcome = await hooks.run("PreToolUse", { tool: "shell", input: { command: "ls" } }, { workspace: ws, toolName: "shell" });
    expect(outcome).toEqual({ warnings: [] });
    expect(JSON.parse(readFileSync(join(ws, "event.json"), "utf8"))).toEqual({
      event: "PreToolUse",
      tool: "shell",
      input: { command: "ls" },
      // Claude Code's keys beside ours.
      cwd: ws,
      hook_event_name: "PreToolUse",
      tool_name: "shell",
      tool_input: { command: "ls" },
    });
    expect(readFileSync(join(ws, "env.txt"), "utf8")).toBe(`PreToolUse ${ws}\n`);
  });

  test("a secret in the event is masked on the hook's stdin, and the hook's environment has none", async () => {
    const ws = workspace();
    const key = "sk-hook-0123456789abcdef";
    registerSecret(key);
    const previous = process.env.SOME_API_KEY;
    process.env.SOME_API_KEY = "named-like-a-key-0123";
    try {
      const hooks = new ShellHooks({ UserPromptSubmit: [{ command: "cat > event.json; printenv > env.txt" }] });
      await hooks.run("UserPromptSubmit", { prompt: `use ${key}` }, { workspace: ws });
      expect(JSON.parse(readFileSync(join(ws, "event.json"), "utf8"))).toEqual({
        event: "UserPromptSubmit",
        prompt: "use [REDACTED]",
        cwd: ws,
        hook_event_name: "UserPromptSubmit",
      });
      const env = readFileSync(join(ws, "env.txt"), "utf8");
      expect(env).toContain("AGENT_HOOK_EVENT=UserPromptSubmit");
      expect(env).not.toContain("SOME_API_KEY");
    } finally {
      clearSecrets();
      if (previous === undefined) delete process.env.SOME_API_KEY;
      else process.env.SOME_API_KEY = previous;
    }
  });

  test("exit 2 blocks with stderr, trimmed, as the reason; the first block wins", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({
      PreToolUse: [
        { command: "echo '  no pushes on Friday  ' >&2; exit 2" },
        { command: "touch second-ran" },
      ],
    });
    const outcome = await hooks.run("PreToolUse", {}, { workspace: ws, toolName: "shell" });
    expect(outcome).toEqual({ blocked: "no pushes on Friday", warnings: [] });
    expect(existsSync(join(ws, "second-ran"))).toBe(false);
  });

  test("another non-zero exit is a warning and the next hooks still run", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({ Stop: [{ command: "echo lint broke >&2; exit 1" }, { command: "touch second-ran" }] });
    const outcome = await hooks.run("Stop", {}, { workspace: ws });
    expect(outcome).toEqual({ warnings: ['Stop hook "echo lint broke >&2; exit 1" exited 1: lint broke'] });
    expect(existsSync(join(ws, "second-ran"))).toBe(true);
  });

  test("a hook past its timeout is killed, with its children, and is a warning", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({ UserPromptSubmit: [{ command: "echo $$ > pid; sleep 30 | cat", timeoutMs: 200 }] });
    const started = Date.now();
    const outcome = await hooks.run("UserPromptSubmit", { prompt: "hi" }, { workspace: ws });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome).toEqual({ warnings: ['UserPromptSubmit hook "echo $$ > pid; sleep 30 | cat" timed out after 200 ms and was killed'] });
    const pid = Number(readFileSync(join(ws, "pid"), "utf8"));
    for (let i = 0; i < 50 && alive(pid); i += 1) await Bun.sleep(20);
    expect(alive(pid)).toBe(false);
  });

  test("the default timeout applies to hooks without one", async () => {
    const hooks = new ShellHooks({ Stop: [{ command: "sleep 30" }] }, { timeoutMs: 100 });
    const outcome = await hooks.run("Stop", {}, { workspace: workspace() });
    expect(outcome.warnings).toEqual(['Stop hook "sleep 30" timed out after 100 ms and was killed']);
  });

  test("a hook that cannot start is a warning", async () => {
    const hooks = new ShellHooks({ Stop: [{ command: "true" }] });
    const outcome = await hooks.run("Stop", {}, { workspace: join(workspace(), "missing") });
    expect(outcome.warnings).toHaveLength(1);
    expect(outcome.warnings[0]).toStartWith('Stop hook "true" could not start: ');
  });

  test("a PreToolUse hook that cannot start denies the call with why: no process, a script not found, one not executable", async () => {
    const ws = workspace();
    const unstartable = await new ShellHooks({ PreToolUse: [{ command: "true" }] }).run("PreToolUse", {}, { workspace: join(ws, "missing"), toolName: "shell" });
    expect(unstartable.blocked).toStartWith('PreToolUse hook "true" could not start (');
    expect(unstartable.blocked).toEndWith("); the call is denied until the hook runs");
    const missing = await new ShellHooks({ PreToolUse: [{ command: "/nonexistent/guard.sh" }] }).run("PreToolUse", {}, { workspace: ws, toolName: "shell" });
    expect(missing).toEqual({ warnings: [], blocked: expect.stringMatching(/^PreToolUse hook "\/nonexistent\/guard.sh" could not start \(.*not found\); the call is denied until the hook runs$/) });
    writeFileSync(join(ws, "guard.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o644 });
    const notExecutable = await new ShellHooks({ PreToolUse: [{ command: "./guard.sh" }] }).run("PreToolUse", {}, { workspace: ws, toolName: "shell" });
    expect(notExecutable.blocked).toMatch(/could not start \(.*[Pp]ermission denied\)/);
    // Other events go on with a warning, as before.
    const post = await new ShellHooks({ PostToolUse: [{ command: "/nonexistent/guard.sh" }] }).run("PostToolUse", {}, { workspace: ws, toolName: "shell" });
    expect(post.blocked).toBeUndefined();
    expect(post.warnings).toHaveLength(1);
  });

  test("matchers are anchored regular expressions over tool names", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({
      PostToolUse: [
        { matcher: "write_file|edit_file", command: "echo $AGENT_HOOK_EVENT >> edits.log" },
        { matcher: "file", command: "echo never >> never.log" },
        { matcher: "*", command: "echo any >> any.log" },
      ],
    });
    await hooks.run("PostToolUse", {}, { workspace: ws, toolName: "edit_file" });
    await hooks.run("PostToolUse", {}, { workspace: ws, toolName: "shell" });
    expect(readFileSync(join(ws, "edits.log"), "utf8")).toBe("PostToolUse\n");
    expect(existsSync(join(ws, "never.log"))).toBe(false);
    expect(readFileSync(join(ws, "any.log"), "utf8")).toBe("any\nany\n");
  });

  test("a large event is delivered whole to a hook that reads it, and does not break one that does not", async () => {
    const ws = workspace();
    const big = "x".repeat(1_000_000);
    const hooks = new ShellHooks({ PostToolUse: [{ command: "true" }, { command: "wc -c > size" }] });
    expect(await hooks.run("PostToolUse", { big }, { workspace: ws, toolName: "shell" })).toEqual({ warnings: [] });
    expect(Number(readFileSync(join(ws, "size"), "utf8"))).toBe(JSON.stringify({ cwd: ws, hook_event_name: "PostToolUse", event: "PostToolUse", big }).length);
  });

  test("an invalid matcher is a ConfigError at construction", () => {
    expect(() => new ShellHooks({ PreToolUse: [{ matcher: "(", command: "true" }] })).toThrow(ConfigError);
  });

  test("Claude Code's tool names select ours in matchers; file tools' path is also their absolute file_path", async () => {
    const ws = workspace();
    const hooks = new ShellHooks({
      PreToolUse: [
        { matcher: "Bash", command: "echo bash >> seen" },
        { matcher: "Edit|Write", command: "jq -r .tool_input.file_path >> seen" },
        { matcher: "write_file", command: "echo ours >> seen" },
      ],
    });
    await hooks.run("PreToolUse", { tool: "shell", input: { command: "ls" } }, { workspace: ws, toolName: "shell" });
    await hooks.run("PreToolUse", { tool: "write_file", input: { path: "src/a.ts", content: "" } }, { workspace: ws, toolName: "write_file" });
    await hooks.run("PreToolUse", { tool: "grep", input: { pattern: "x" } }, { workspace: ws, toolName: "grep" });
    expect(readFileSync(join(ws, "seen"), "utf8")).toBe(`bash\n${join(ws, "src/a.ts")}\nours\n`);
  });

  test("JSON on stdout: decision block, continue false, additionalContext, systemMessage; plain stdout is context only for UserPromptSubmit and SessionStart", async () => {
    const ws = workspace();
    const answer = async (event: "PostToolUse" | "UserPromptSubmit" | "Stop", command: string) =>
      new ShellHooks({ [event]: [{ command }] }).run(event, {}, { workspace: ws });
    expect(await answer("Stop", `echo '{"decision":"block","reason":"not yet"}'`)).toEqual({ blocked: "not yet", warnings: [] });
    expect(await answer("Stop", `echo '{"continue":false,"stopReason":"enough"}'`)).toEqual({ stopped: "enough", warnings: [] });
    expect(await answer("PostToolUse", `echo '{"hookSpecificOutput":{"additionalContext":"lint clean"},"systemMessage":"hi"}'`)).toEqual({
      context: ["lint clean"],
      warnings: [`PostToolUse hook ${JSON.stringify(`echo '{"hookSpecificOutput":{"additionalContext":"lint clean"},"systemMessage":"hi"}'`)}: hi`],
    });
    expect(await answer("UserPromptSubmit", "echo 'branch: main'")).toEqual({ context: ["branch: main"], warnings: [] });
    expect(await answer("PostToolUse", "echo 'just chatter'")).toEqual({ warnings: [] });
    const broken = await answer("Stop", "echo '{not json'");
    expect(broken.blocked).toBeUndefined();
    expect(broken.warnings[0]).toContain("printed invalid JSON on stdout");
  });

  test("Claude Code's settings shape is read as our entries, timeout in seconds", () => {
    const parsed = ConfigFile.parse({
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "a.sh", timeout: 5 }, { type: "command", command: "b.sh" }] }],
        Stop: [{ command: "c.sh" }],
      },
    });
    expect(parsed.hooks).toEqual({
      PreToolUse: [
        { matcher: "Bash", command: "a.sh", timeoutMs: 5000 },
        { matcher: "Bash", command: "b.sh" },
      ],
      Stop: [{ command: "c.sh" }],
    });
  });
});
