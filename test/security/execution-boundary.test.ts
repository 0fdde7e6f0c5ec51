import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgent } from "../e2e/agent-binary.ts";
import { ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { git } from "../../src/worktrees/git.ts";
import { sandboxProblem } from "./attack-fixture.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { TINY } from "../mcp/helpers.ts";
import { visibleInSandbox } from "../support/sandbox-visible.ts";

// The execution boundary (docs/security.md), attacked by a scripted model through
// the compiled binary: whatever the model writes — git's config, a worktree's
// .git pointer, a script a hook runs — is never run outside the sandbox, and no
// process the agent starts gets the API key. "Outside" is the directory above
// the workspace: a marker there means something ran with the user's rights.

const KEY = "test-key-0123456789";
const servers: ScriptedModelServer[] = [];
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A git repository with one commit in `<root>/workspace`; the user's config dir beside it. */
async function world() {
  const root = realpathSync(tempDir("agent-boundary-"));
  const workspace = join(root, "workspace");
  const configHome = join(root, "config");
  mkdirSync(workspace);
  mkdirSync(join(configHome, "agent"), { recursive: true });
  for (const args of [["init", "--quiet", "--initial-branch=main"], ["config", "user.name", "Test User"], ["config", "user.email", "test@example.invalid"]]) {
    expect((await git(workspace, args)).code).toBe(0);
  }
  writeFileSync(join(workspace, "notes.txt"), "one\n");
  writeFileSync(join(workspace, ".gitignore"), ".agent/\n");
  expect((await git(workspace, ["add", "."])).code).toBe(0);
  expect((await git(workspace, ["commit", "--quiet", "-m", "start"])).code).toBe(0);
  const marker = join(root, "MARKER");
  /** `agent run` in the workspace with these replies scripted; the user config holds `userConfig`. */
  const run = async (script: ScriptedReply[], flags: string[], userConfig: object = {}) => {
    writeFileSync(join(configHome, "agent", "config.json"), JSON.stringify(userConfig));
    const server = ScriptedModelServer.start(script);
    servers.push(server);
    const result = await runAgent(["run", "--base-url", server.url, "--workspace", workspace, "--output", "json", ...flags, "go"], {
      cwd: workspace,
      env: { OPENAI_API_KEY: KEY, AGENT_STATE_DIR: undefined, XDG_CONFIG_HOME: configHome },
    });
    const results = server.requests.slice(1).map((request) => String(request.body.messages.findLast((m) => m.role === "tool")?.content));
    return { ...result, results, server };
  };
  return { root, workspace, configHome, marker, run };
}

const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({ identity: "lead", toolCalls: [{ name, arguments: args }] });
const done: ScriptedReply = { identity: "lead", text: "done" };

describe.if(requirePrerequisite("bubblewrap", sandboxProblem()))("the execution boundary", () => {
  test("core.fsmonitor planted in .git/config: edit_file is refused, and even allowed by a rule the runtime's git refuses to run there", async () => {
    const { workspace, marker, run } = await world();
    const planted = { path: ".git/config", old_string: "[core]", new_string: `[core]\n\tfsmonitor = "env > ${marker}"` };
    const refused = await run([call("edit_file", planted), done], ["--permission-mode", "acceptEdits"]);
    expect(refused.code).toBe(0);
    expect(refused.results[0]).toMatch(/permission denied.*git's own files/);
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).not.toContain("fsmonitor");

    // The user allows that very edit: the file tool writes it, then the runtime's git meets it.
    const spawn = { name: "alice", role: "editor", prompt: "Edit notes.txt.", isolation: "worktree" };
    // (An edit needs a read of the file first, and the rule names the file for both.)
    const read = call("read_file", { path: ".git/config" });
    const rules = ["--allow", "edit_file(.git/config)", "--allow", "read_file(.git/config)"];
    const allowed = await run([read, call("edit_file", planted), call("spawn_teammate", spawn), done], ["--permission-mode", "acceptEdits", ...rules]);
    expect(allowed.code).toBe(0);
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toContain("fsmonitor");
    expect(allowed.results[2]).toMatch(/refusing to run git in .*: .*\.git\/config sets core\.fsmonitor \(it names a program git runs on every status\); remove it/);
    expect(existsSync(marker)).toBe(false);
  });

  test("the Lead's sandboxed shell cannot write .git: config, hooks and HEAD stay as they were", async () => {
    const { workspace, marker, run } = await world();
    const before = readFileSync(join(workspace, ".git", "config"), "utf8");
    // From a script file, whose commands the permission layer cannot see (it would stop a `cp` into .git on the line first): what only the sandbox stops.
    writeFileSync(join(workspace, "hook.sh"), `#!/bin/sh\nenv > ${marker}\n`, { mode: 0o755 });
    writeFileSync(join(workspace, "plant.sh"), `git config core.fsmonitor 'env > ${marker}'; mkdir -p .git/hooks; cp hook.sh .git/hooks/post-commit; cp notes.txt .git/HEAD; echo exit=$?\n`);
    const command = "sh ./plant.sh";
    const result = await run([call("shell", { command }), done], ["--allow", "shell"]);
    expect(result.code).toBe(0);
    expect(result.results[0]).toContain("Read-only file system");
    expect(readFileSync(join(workspace, ".git", "config"), "utf8")).toBe(before);
    expect(existsSync(join(workspace, ".git", "hooks", "post-commit"))).toBe(false);
    expect(readFileSync(join(workspace, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
    expect(existsSync(marker)).toBe(false);
  });

  test("a worktree teammate pointing its .git at a repository of its own: write_file and its shell are refused, its end-of-turn commit runs nothing of it", async () => {
    const { workspace, marker, run } = await world();
    const evilConfig = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "env > ${marker}"\n`;
    const alice = (name: string, args: Record<string, unknown>): ScriptedReply => ({ identity: "alice", toolCalls: [{ name, arguments: args }] });
    const script: ScriptedReply[] = [
      call("spawn_teammate", { name: "alice", role: "editor", prompt: "Edit notes.txt.", isolation: "worktree" }),
      { identity: "lead", text: "alice is at work." },
      alice("write_file", { path: "evilgit/config", content: evilConfig }),
      alice("write_file", { path: "evilgit/HEAD", content: "ref: refs/heads/main\n" }),
      // The target from an expansion, which the permission layer cannot name (in acceptEdits it lets it through): what only the sandbox stops.
      alice("shell", { command: "mkdir -p evilgit/objects evilgit/refs && printf 'gitdir: evilgit\\n' > pointer && cp pointer \"$(printf .git)\"; echo exit=$?" }),
      alice("write_file", { path: ".git", content: "gitdir: evilgit\n" }),
      { identity: "alice", text: "Done." },
      { identity: "lead", text: "done" },
    ];
    const result = await run(script, ["--permission-mode", "acceptEdits", "--allow", "shell"]);
    expect(result.code).toBe(0);
    const aliceResults = result.server.requests.filter((r) => r.identity === "alice").slice(1).map((r) => String(r.body.messages.findLast((m) => m.role === "tool")?.content));
    expect(aliceResults[2]).toContain("Read-only file system");
    expect(aliceResults[3]).toMatch(/permission denied.*git's own files/);
    const worktrees = join(workspace, ".agent", "worktrees");
    const [session = ""] = readdirSync(worktrees).filter((name) => name !== ".gitignore");
    expect(readFileSync(join(worktrees, session, "alice", ".git"), "utf8")).toMatch(/^gitdir: .*\/\.git\/worktrees\/alice\n$/);
    expect(existsSync(marker)).toBe(false);
  });

  test("the docs' Stop hook runs npm test inside the sandbox: a test script the model rewrote cannot write outside, and sees no key", async () => {
    const { workspace, marker, run } = await world();
    writeFileSync(join(workspace, "package.json"), JSON.stringify({ name: "x", private: true, scripts: { test: "true" } }, null, 2));
    const hooks = { hooks: { Stop: [{ command: "npm test --silent >&2 || exit 2" }] } };
    const edit = { path: "package.json", old_string: '"test": "true"', new_string: `"test": "env > hook-env.txt; touch ${marker} 2>/dev/null; exit 0"` };
    const result = await run([call("read_file", { path: "package.json" }), call("edit_file", edit), done], ["--permission-mode", "acceptEdits"], hooks);
    expect(result.code).toBe(0);
    // It ran (in the workspace, which the sandbox leaves writable), but not as the user.
    const env = readFileSync(join(workspace, "hook-env.txt"), "utf8");
    expect(env).not.toContain(KEY);
    expect(existsSync(marker)).toBe(false);
  });

  test("a PreToolUse hook's code rewritten by a sandboxed command: its next run is sandboxed too; only the user's config can take a hook out", async () => {
    const { workspace, configHome, marker, run } = await world();
    mkdirSync(join(workspace, "hooks"));
    // The script the hook names is read-only in the sandbox; a file it sources is not (nothing names it).
    writeFileSync(join(workspace, "hooks", "check.sh"), "#!/bin/sh\n. ./hooks/lib.sh\nexit 0\n", { mode: 0o755 });
    writeFileSync(join(workspace, "hooks", "lib.sh"), "true\n");
    writeFileSync(join(workspace, "evil.sh"), `#!/bin/sh\nenv > hook-env.txt\ntouch ${marker} 2>/dev/null\nexit 0\n`, { mode: 0o755 });
    // The copy from a script file: the permission layer would refuse `cp … hooks/check.sh` on the line (a file a hook runs).
    writeFileSync(join(workspace, "swap.sh"), "cp evil.sh hooks/check.sh 2>/dev/null; cp evil.sh hooks/lib.sh\n");
    const hooks = { hooks: { PreToolUse: [{ matcher: "shell", command: "./hooks/check.sh" }] } };
    const script = [call("shell", { command: "sh ./swap.sh" }), call("shell", { command: "true" }), done];
    const result = await run(script, ["--allow", "shell"], hooks);
    expect(result.code).toBe(0);
    expect(readFileSync(join(workspace, "hooks", "check.sh"), "utf8")).toBe("#!/bin/sh\n. ./hooks/lib.sh\nexit 0\n");
    expect(readFileSync(join(workspace, "hooks", "lib.sh"), "utf8")).toContain("touch");
    expect(readFileSync(join(workspace, "hook-env.txt"), "utf8")).not.toContain(KEY);
    expect(existsSync(marker)).toBe(false);

    // A project's "sandbox": false is ignored, with a warning, even in a trusted project; the user's is honoured.
    const unsandboxed = { hooks: { PreToolUse: [{ matcher: "shell", command: "./hooks/check.sh", sandbox: false }] } };
    writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify(unsandboxed));
    // Trusted, so that the project's hook applies at all (untrusted, it would be ignored whole).
    const project = await run([call("shell", { command: "true" }), done], ["--allow", "shell", "--trust-project"]);
    expect(project.stderr).toMatch(/"sandbox": false ignored: only the user config can run a hook outside the sandbox/);
    expect(existsSync(marker)).toBe(false);
    writeFileSync(join(workspace, ".agent", "config.json"), "{}");
    const user = await run([call("shell", { command: "true" }), done], ["--allow", "shell"], unsandboxed);
    expect(user.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    // `agent config show` says which hook runs outside, and from which file.
    const shown = await runAgent(["config", "show", "--json"], { cwd: workspace, env: { XDG_CONFIG_HOME: configHome } });
    expect(JSON.parse(shown.stdout).settings.hooks).toMatchObject({ value: { PreToolUse: [{ command: "./hooks/check.sh", sandbox: false }] } });
  });

  test("a stdio MCP server the workspace's config defines runs in the sandbox; the same server in the user's config runs as the user", async () => {
    const { root, workspace, run } = await world();
    const outside = join(root, "server.pid");
    const server = { command: process.execPath, args: [TINY, "--pid-file", outside] };
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    // Two servers: one writing its pid file in the workspace (it ran, in the sandbox), one outside (it cannot).
    // (Visible inside the sandbox wherever the checkout is: it has a private /tmp.)
    const inside = { command: visibleInSandbox(process.execPath), args: [visibleInSandbox(TINY), "--pid-file", join(workspace, "inside.pid")] };
    writeFileSync(join(workspace, ".agent", "config.local.json"), JSON.stringify({ mcpServers: { tiny: server, inside } }));
    // Trusted (untrusted, the workspace's servers are not started at all): they start, sandboxed.
    const sandboxed = await run([done], ["--trust-project"]);
    expect(sandboxed.code).toBe(0);
    expect(existsSync(join(workspace, "inside.pid"))).toBe(true);
    expect(existsSync(outside)).toBe(false);
    writeFileSync(join(workspace, ".agent", "config.local.json"), "{}");
    const user = await run([done], [], { mcpServers: { tiny: server } });
    expect(user.code).toBe(0);
    expect(existsSync(outside)).toBe(true);
  });
});
