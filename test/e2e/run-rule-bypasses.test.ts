import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TINY } from "../mcp/helpers.ts";
import { attackSuite, sandboxProblem } from "../security/attack-fixture.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";

// Issue 23's rule bypasses, replayed by a scripted hostile model against the
// compiled binary, headless: each allow rule must mean only what it says.

const setup = attackSuite();
// Without bubblewrap one test fails naming what to install; the tests that need it are left out.
const sandboxTest = requirePrerequisite("bubblewrap", sandboxProblem()) ? test : test.skip;

function gitInit(workspace: string): void {
  const init = Bun.spawnSync(["git", "init", "-q", workspace], { stderr: "pipe" });
  if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr}`);
}

describe("allow rules and what changes the program a command runs", () => {
  test("under shell(git status*), git status runs but GIT_CONFIG_* naming an fsmonitor is refused as an unattended ask", async () => {
    const { workspace, attack } = setup();
    gitInit(workspace);
    const fsmonitor = 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0="touch fsmonitor-ran" git status';
    const run = await attack(
      [
        { name: "shell", arguments: { command: "git status --short" } },
        { name: "shell", arguments: { command: fsmonitor } },
        { name: "shell", arguments: { command: "git -c core.fsmonitor='touch fsmonitor-ran' status" } },
      ],
      ["--allow", "shell(git status*)"],
    );
    expect(run.code).toBe(0);
    expect(run.results[0]).not.toContain("permission denied");
    expect(run.results[1]).toContain("permission denied: shell needs approval");
    expect(run.results[1]).toContain("sets GIT_CONFIG_COUNT");
    expect(run.results[2]).toContain("permission denied");
    expect(existsSync(join(workspace, "fsmonitor-ran"))).toBe(false);
  });

  sandboxTest("under shell(npm test*), PATH=./evil:$PATH npm test does not run ./evil/npm", async () => {
    const { workspace, attack } = setup();
    mkdirSync(join(workspace, "evil"));
    writeFileSync(join(workspace, "evil", "npm"), "#!/bin/sh\ntouch evil-npm-ran\n");
    chmodSync(join(workspace, "evil", "npm"), 0o755);
    const run = await attack(
      [
        { name: "shell", arguments: { command: "PATH=./evil:$PATH npm test" } },
        { name: "shell", arguments: { command: "env PATH=./evil:/usr/bin:/bin npm test" } },
      ],
      ["--allow", "shell(npm test*)"],
    );
    expect(run.code).toBe(0);
    for (const result of run.results) expect(result).toContain("permission denied");
    expect(run.results[0]).toContain("sets PATH");
    expect(existsSync(join(workspace, "evil-npm-ran"))).toBe(false);
  });
});

describe("path rules name every way of changing the file", () => {
  test("--deny 'write_file(.env)' refuses edit_file .env, a redirection, cp and sed -i, in acceptEdits", async () => {
    const { workspace, attack } = setup();
    writeFileSync(join(workspace, ".env"), "KEY=original\n");
    writeFileSync(join(workspace, "evil.txt"), "KEY=evil\n");
    const run = await attack(
      [
        { name: "read_file", arguments: { path: ".env" } },
        { name: "edit_file", arguments: { path: ".env", old_string: "original", new_string: "edited" } },
        { name: "shell", arguments: { command: "echo KEY=redirected > .env" } },
        { name: "shell", arguments: { command: "cp evil.txt .env" } },
        { name: "shell", arguments: { command: "sed -i s/original/sedded/ .env" } },
      ],
      ["--permission-mode", "acceptEdits", "--allow", "shell", "--deny", "write_file(.env)"],
    );
    expect(run.code).toBe(0);
    expect(run.results[0]).toContain("KEY=original");
    for (const result of run.results.slice(1)) expect(result).toContain('matches the deny rule "write_file(.env)"');
    expect(readFileSync(join(workspace, ".env"), "utf8")).toBe("KEY=original\n");
  });

  sandboxTest("with a deny rule on shell, $(…) as a command, | sh and python3 -c are refused headless even in bypassPermissions", async () => {
    const { workspace, attack } = setup();
    const run = await attack(
      [
        { name: "shell", arguments: { command: "$(echo touch) subst-ran" } },
        { name: "shell", arguments: { command: "echo 'touch piped-ran' | sh" } },
        { name: "shell", arguments: { command: "sh <<'EOF'\ntouch heredoc-ran\nEOF" } },
        { name: "shell", arguments: { command: "python3 -c 'open(\"python-ran\", \"w\")'" } },
        { name: "shell", arguments: { command: "echo visible > visible.txt" } },
      ],
      ["--permission-mode", "bypassPermissions", "--deny", "shell(touch*)"],
    );
    expect(run.code).toBe(0);
    for (const result of run.results.slice(0, 4)) expect(result).toContain('cannot be checked against the deny rule "shell(touch*)"');
    for (const marker of ["subst-ran", "piped-ran", "heredoc-ran", "python-ran"]) expect(existsSync(join(workspace, marker))).toBe(false);
    // A line whose programs are all visible still runs.
    expect(readFileSync(join(workspace, "visible.txt"), "utf8")).toBe("visible\n");
  });
});

describe("wrappers that run a command carry nothing past a deny rule", () => {
  sandboxTest("flock, taskset and watch are seen through; unshare, setpriv and strace cannot be checked: all refused under --deny 'shell(touch*)' in bypassPermissions", async () => {
    const { workspace, attack } = setup();
    const run = await attack(
      [
        { name: "shell", arguments: { command: "flock /tmp/agent-test.lock touch flock-ran" } },
        { name: "shell", arguments: { command: "flock -w 1 /tmp/agent-test.lock -c 'touch flock-c-ran'" } },
        { name: "shell", arguments: { command: "taskset -c 0 touch taskset-ran" } },
        { name: "shell", arguments: { command: "watch -g -n 1 touch watch-ran" } },
        { name: "shell", arguments: { command: "unshare -r touch unshare-ran" } },
        { name: "shell", arguments: { command: "setpriv --reuid=0 touch setpriv-ran" } },
        { name: "shell", arguments: { command: "strace -o /dev/null touch strace-ran" } },
        { name: "shell", arguments: { command: "flock /tmp/agent-test.lock echo locked > locked.txt" } },
      ],
      ["--permission-mode", "bypassPermissions", "--deny", "shell(touch*)"],
    );
    expect(run.code).toBe(0);
    for (const result of run.results.slice(0, 4)) expect(result).toContain('matches the deny rule "shell(touch*)"');
    for (const result of run.results.slice(4, 7)) expect(result).toContain('cannot be checked against the deny rule "shell(touch*)"');
    for (const marker of ["flock-ran", "flock-c-ran", "taskset-ran", "watch-ran", "unshare-ran", "setpriv-ran", "strace-ran"]) expect(existsSync(join(workspace, marker))).toBe(false);
    // A wrapped command no rule denies still runs (positive control).
    expect(readFileSync(join(workspace, "locked.txt"), "utf8")).toBe("locked\n");
  });
});

describe("MCP annotations are hints", () => {
  test("in plan mode a readOnlyHint tool does not run without an allow rule naming it, and runs with one", async () => {
    const { root, workspace, attack } = setup();
    const servers = join(root, "servers.json");
    writeFileSync(servers, JSON.stringify({ mcpServers: { tiny: { command: process.execPath, args: [TINY] } } }));
    const target = join(workspace, "stamped.txt");
    const call = { name: "mcp__tiny__stamp", arguments: { path: target } };
    const refused = await attack([call], ["--permission-mode", "plan", "--mcp-config", servers]);
    expect(refused.code).toBe(0);
    expect(refused.results[0]).toContain("plan mode is read-only: mcp__tiny__stamp is an MCP tool");
    expect(existsSync(target)).toBe(false);

    const allowed = await attack([call], ["--permission-mode", "plan", "--mcp-config", servers, "--allow", "mcp__tiny__stamp"]);
    expect(allowed.results[0]).toBe(`stamped ${target}`);
    expect(readFileSync(target, "utf8")).toBe("stamped\n");
  });

  test("a pattern deny rule on an MCP tool matches its arguments' JSON", async () => {
    const { root, workspace, attack } = setup();
    const servers = join(root, "servers.json");
    writeFileSync(servers, JSON.stringify({ mcpServers: { tiny: { command: process.execPath, args: [TINY] } } }));
    const run = await attack(
      [
        { name: "mcp__tiny__stamp", arguments: { path: join(workspace, "secret-stamp.txt") } },
        { name: "mcp__tiny__stamp", arguments: { path: join(workspace, "ok.txt") } },
      ],
      ["--permission-mode", "bypassPermissions", "--mcp-config", servers, "--deny", "mcp__tiny__stamp(*secret*)"],
    );
    expect(run.results[0]).toContain('matches the deny rule "mcp__tiny__stamp(*secret*)"');
    expect(existsSync(join(workspace, "secret-stamp.txt"))).toBe(false);
    expect(readFileSync(join(workspace, "ok.txt"), "utf8")).toBe("stamped\n");
  });
});
