import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastToolResult, runSetup, scriptedServers, toolCallReply } from "./run-fixture.ts";

// Hook scripts written the way Claude Code's hooks documentation writes them
// (bash + jq, their stdin keys, exit 2 and their JSON answers), configured in
// Claude Code's settings.json shape, run unchanged by the compiled binary.

const startServer = scriptedServers();

/** Writes an executable script into the workspace's `.claude/hooks/`, as their docs lay them out. */
function script(workspace: string, name: string, text: string): string {
  const dir = join(workspace, ".claude", "hooks");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return `./.claude/hooks/${name}`;
}

/** Claude Code's settings shape: `{"hooks": {"Event": [{"matcher": …, "hooks": [{"type": "command", "command": …}]}]}}`. */
function configure(workspace: string, hooks: Record<string, { matcher?: string; command: string }[]>): void {
  const shaped = Object.fromEntries(
    Object.entries(hooks).map(([event, list]) => [
      event,
      list.map(({ matcher, command }) => ({ ...(matcher ? { matcher } : {}), hooks: [{ type: "command", command }] })),
    ]),
  );
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ hooks: shaped }));
}

const RUN = ["--permission-mode", "bypassPermissions", "--trust-project"];

describe("Claude Code hook scripts run unchanged", () => {
  test("a PreToolUse Bash hook reading .tool_input.command blocks rm -rf with exit 2; its stderr reaches the model", async () => {
    const { run, workspace } = runSetup();
    const blocker = script(
      workspace,
      "block-rm.sh",
      `#!/bin/bash
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed" >&2
  exit 2
fi
exit 0
`,
    );
    configure(workspace, { PreToolUse: [{ matcher: "Bash", command: blocker }] });
    mkdirSync(join(workspace, "build"));
    const server = startServer([
      toolCallReply("shell", { command: "rm -rf build" }),
      toolCallReply("shell", { command: "echo kept" }, (text) => expect(text).toContain("blocked by PreToolUse hook: Blocked: rm -rf is not allowed")),
      { check: (r) => expect(lastToolResult(r)).toContain("kept"), text: "done" },
    ]);
    const result = await run(["clean up", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
    expect(existsSync(join(workspace, "build"))).toBe(true);
  });

  test("an Edit|Write hook answering JSON permissionDecision deny stops the write, with its reason to the model", async () => {
    const { run, workspace } = runSetup();
    const guard = script(
      workspace,
      "protect-env.sh",
      `#!/bin/bash
file=$(jq -r '.tool_input.file_path // empty')
if [[ "$file" == *.env ]]; then
  jq -n --arg f "$file" '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: ("No writes to " + $f)}}'
  exit 0
fi
exit 0
`,
    );
    configure(workspace, { PreToolUse: [{ matcher: "Edit|Write", command: guard }] });
    const server = startServer([
      toolCallReply("write_file", { path: "prod.env", content: "KEY=1\n" }),
      toolCallReply("write_file", { path: "notes.txt", content: "ok\n" }, (text) =>
        expect(text).toBe(`blocked by PreToolUse hook: No writes to ${join(workspace, "prod.env")}`),
      ),
      { check: (r) => expect(lastToolResult(r)).toContain("notes.txt"), text: "done" },
    ]);
    const result = await run(["write things", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
    expect(existsSync(join(workspace, "prod.env"))).toBe(false);
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("ok\n");
  });

  test("UserPromptSubmit additionalContext reaches the model with the prompt; the hook sees their keys", async () => {
    const { run, workspace, sessionDir } = runSetup();
    const context = script(
      workspace,
      "ticket.sh",
      `#!/bin/bash
input=$(cat)
echo "$input" > seen.json
prompt=$(echo "$input" | jq -r '.prompt')
jq -n --arg p "$prompt" '{hookSpecificOutput: {hookEventName: "UserPromptSubmit", additionalContext: ("Current ticket: ABC-123 (for: " + $p + ")")}}'
`,
    );
    configure(workspace, { UserPromptSubmit: [{ command: context }] });
    const server = startServer([
      {
        check: (r) => {
          const user = String(r.body.messages.find((m) => m.role === "user")?.content);
          expect(user).toStartWith("fix the bug");
          expect(user).toContain("Current ticket: ABC-123 (for: fix the bug)");
        },
        text: "on it",
      },
    ]);
    const result = await run(["fix the bug", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "on it\n" });
    server.assertDone();
    const seen = JSON.parse(readFileSync(join(workspace, "seen.json"), "utf8"));
    expect(seen).toMatchObject({
      hook_event_name: "UserPromptSubmit",
      prompt: "fix the bug",
      cwd: workspace,
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      transcript_path: join(sessionDir(), "agents", "lead.jsonl"),
      permission_mode: "bypassPermissions",
      // Ours stay beside theirs.
      event: "UserPromptSubmit",
      identity: "lead",
    });
    expect(existsSync(seen.transcript_path)).toBe(true);
  });

  test('a Stop hook answering decision "block" sends the agent back with its reason, once (stop_hook_active)', async () => {
    const { run, workspace } = runSetup();
    const stop = script(
      workspace,
      "tests-first.sh",
      `#!/bin/bash
if [ "$(jq -r '.stop_hook_active')" = "true" ]; then
  exit 0
fi
echo '{"decision": "block", "reason": "Run the tests before you stop."}'
`,
    );
    configure(workspace, { Stop: [{ command: stop }] });
    const server = startServer([
      { text: "done" },
      {
        check: (r) => expect(String(r.body.messages.at(-1)?.content)).toContain("Run the tests before you stop."),
        text: "tests pass, done",
      },
    ]);
    const result = await run(["finish", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "tests pass, done\n" });
    server.assertDone();
  });

  test("a PostToolUse formatter matched on Write|Edit runs on the written file; its additionalContext rides with the result", async () => {
    const { run, workspace } = runSetup();
    const format = script(
      workspace,
      "format.sh",
      `#!/bin/bash
file=$(jq -r '.tool_input.file_path')
sed -i 's/[[:space:]]*$//' "$file"
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "formatted"}}'
`,
    );
    configure(workspace, { PostToolUse: [{ matcher: "Write|Edit", command: format }] });
    const server = startServer([
      toolCallReply("write_file", { path: "a.txt", content: "x   \ny\t\n" }),
      { check: (r) => expect(lastToolResult(r)).toContain("[PostToolUse hook: formatted]"), text: "done" },
    ]);
    const result = await run(["write", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("x\ny\n");
  });
});

describe("the lifecycle events", () => {
  test("SessionStart, SubagentStop (teammate), TeammateIdle, TaskCompleted and SessionEnd each run, with their keys", async () => {
    const { run, workspace } = runSetup();
    // One line per event: the name and the key each event adds.
    const log = script(workspace, "log.sh", `#!/bin/bash\njq -c '{e: .hook_event_name, s: .source, t: .task.subject, m: .teammate, a: .stop_hook_active, r: .reason, who: .identity}' >> events.log\n`);
    const every = ["SessionStart", "SubagentStop", "TeammateIdle", "TaskCompleted", "SessionEnd", "Stop"];
    configure(workspace, Object.fromEntries(every.map((event) => [event, [{ command: log }]])));
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "ship it" } }] },
      { identity: "lead", toolCalls: [{ name: "claim_task", arguments: { id: "t1" } }] },
      { identity: "lead", toolCalls: [{ name: "complete_task", arguments: { id: "t1" } }] },
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "qa", prompt: "Say hello." } }] },
      { identity: "alice", text: "Hello." },
      { identity: "lead", text: "Waiting." },
      { identity: "lead", text: "All done." },
    ]);
    const result = await run(["go", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "All done.\n" });
    server.assertDone();
    const events = readFileSync(join(workspace, "events.log"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const named = (e: string) => events.filter((event) => event.e === e);
    expect(events[0]).toMatchObject({ e: "SessionStart", s: "startup", who: "lead" });
    expect(named("TaskCompleted")).toEqual([expect.objectContaining({ t: "ship it", who: "lead" })]);
    expect(named("SubagentStop")).toEqual([expect.objectContaining({ who: "alice", a: false })]);
    expect(named("TeammateIdle").length).toBeGreaterThanOrEqual(1);
    expect(named("TeammateIdle")[0]).toMatchObject({ m: "alice" });
    expect(named("Stop").every((event) => event.who === "lead")).toBe(true);
    expect(events.at(-1)).toMatchObject({ e: "SessionEnd", r: "other", who: "lead" });
  });
});

describe("a hook script outside the workspace", () => {
  // The sandbox's /tmp is private and its root read-only: the script is bound
  // back read-only at its path, so it runs, and the command it guards is denied.
  for (const base of ["/var/tmp", "/tmp"]) {
    test(`a PreToolUse guard under ${base} runs inside the sandbox and denies the call`, async () => {
      const { run, workspace } = runSetup();
      const dir = mkdtempSync(join(base, "agent-hooks-"));
      try {
        const guard = join(dir, "guard.sh");
        writeFileSync(guard, `#!/bin/bash\ncommand=$(jq -r '.tool_input.command')\necho "guard at ${dir} refuses: $command" >&2\nexit 2\n`);
        chmodSync(guard, 0o755);
        configure(workspace, { PreToolUse: [{ matcher: "Bash", command: guard }] });
        const server = startServer([
          toolCallReply("shell", { command: "touch made.txt" }),
          { check: (r) => expect(lastToolResult(r)).toBe(`blocked by PreToolUse hook: guard at ${dir} refuses: touch made.txt`), text: "done" },
        ]);
        const result = await run(["make a file", "--base-url", server.url, ...RUN]);
        expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
        server.assertDone();
        expect(existsSync(join(workspace, "made.txt"))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('a guard named "$HOME/.claude/hooks/guard.sh" (the user\'s hidden config dir) is bound back and denies the call', async () => {
    const { run, workspace } = runSetup();
    const home = join(workspace, "..", "home");
    const dir = join(home, ".claude", "hooks");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "guard.sh"), `#!/bin/bash\necho "home guard refuses: $(jq -r '.tool_input.command')" >&2\nexit 2\n`);
    chmodSync(join(dir, "guard.sh"), 0o755);
    configure(workspace, { PreToolUse: [{ matcher: "Bash", command: '"$HOME/.claude/hooks/guard.sh"' }] });
    const server = startServer([
      toolCallReply("shell", { command: "touch made.txt" }),
      { check: (r) => expect(lastToolResult(r)).toBe("blocked by PreToolUse hook: home guard refuses: touch made.txt"), text: "done" },
    ]);
    const result = await run(["make a file", "--base-url", server.url, ...RUN], { env: { HOME: home } });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
    expect(existsSync(join(workspace, "made.txt"))).toBe(false);
  });
});

describe("what claude -p reports of hooks", () => {
  // Both result shapes: ours (--output json) and Claude's stream-json result line.
  for (const [shape, flags] of [
    ["--output json", ["--output", "json"]],
    ["claude stream-json", ["--output-format", "stream-json"]],
  ] as const) {
    test(`${shape}: a PreToolUse hook's block is in permission_denials; hook stdin has tool_use_id and prompt_id`, async () => {
      const { run, workspace } = runSetup();
      // Every event's stdin kept, one line each; `rm` is blocked.
      const guard = script(
        workspace,
        "guard.sh",
        `#!/bin/bash
input=$(cat)
echo "$input" | jq -c '{e: .hook_event_name, id: .tool_use_id, p: .prompt_id}' >> events.log
if echo "$input" | jq -r '.tool_input.command // empty' | grep -q '^rm '; then
  echo "no removing" >&2
  exit 2
fi
`,
      );
      configure(workspace, Object.fromEntries(["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"].map((event) => [event, [{ command: guard }]])));
      mkdirSync(join(workspace, "build"));
      const server = startServer([
        { toolCalls: [{ id: "call_rm", name: "shell", arguments: { command: "rm -rf build" } }] },
        { toolCalls: [{ id: "call_echo", name: "shell", arguments: { command: "echo kept" } }] },
        { text: "done" },
      ]);
      const result = await run(["clean up", "--base-url", server.url, ...RUN, ...flags]);
      expect(result.code).toBe(0);
      server.assertDone();
      const last = JSON.parse(result.stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
      expect(last.permission_denials).toEqual([
        expect.objectContaining({ tool_name: "shell", tool_use_id: "call_rm", tool_input: { command: "rm -rf build" }, reason: "blocked by PreToolUse hook: no removing" }),
      ]);
      const prompt = last.idempotency_key;
      expect(prompt).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
      const events = readFileSync(join(workspace, "events.log"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
      // Before the first prompt there is none (SessionStart); from it on, the prompt's id.
      expect(events).toEqual([
        { e: "SessionStart", id: null, p: null },
        { e: "UserPromptSubmit", id: null, p: prompt },
        { e: "PreToolUse", id: "call_rm", p: prompt },
        { e: "PreToolUse", id: "call_echo", p: prompt },
        { e: "PostToolUse", id: "call_echo", p: prompt },
        { e: "Stop", id: null, p: prompt },
      ]);
      expect(existsSync(join(workspace, "build"))).toBe(true);
    });
  }
});
