import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { type RunOptions, runAgent } from "./agent-binary.ts";
import { lastToolResult, scriptedServers, toolCallReply } from "./run-fixture.ts";

// Run from a subdirectory of a git repository, as a user would (`cd repo/pkg &&
// agent run …`, no --workspace): the repository is the workspace, the
// instructions from the user's own AGENTS.md down to pkg/ reach the model, a
// nested AGENTS.md comes with the first read under it; `.mcp.json` at the root
// is read like Claude Code's, once the project is trusted.

const startServer = scriptedServers();

const systemOf = (request: RecordedRequest | undefined) => String(request?.body.messages[0]?.content);

function repository() {
  const root = realpathSync(tempDir("agent-where-e2e-"));
  const repo = join(root, "repo");
  const configHome = join(root, "config");
  mkdirSync(join(repo, "pkg"), { recursive: true });
  mkdirSync(join(configHome, "agent"), { recursive: true });
  const init = Bun.spawnSync(["git", "init", "-q", "-b", "main", repo]);
  if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr.toString()}`);
  const env = { OPENAI_API_KEY: "test-key", XDG_CONFIG_HOME: configHome, AGENT_TRUST_PROJECT: undefined, AGENT_STATE_DIR: undefined };
  const agent = (args: string[], options: RunOptions = {}) => runAgent(args, { cwd: join(repo, "pkg"), ...options, env: { ...env, ...options.env } });
  return { root, repo, configHome, agent };
}

describe("agent run from a subdirectory of a git repository", () => {
  test("the repository is the workspace; user, root and pkg instructions in that order; a nested AGENTS.md on first read; the sandboxed shell reaches the root", async () => {
    const { repo, configHome, agent } = repository();
    writeFileSync(join(configHome, "agent", "AGENTS.md"), "USER RULE: answer briefly.\n");
    writeFileSync(join(repo, "AGENTS.md"), "ROOT RULE: run make check.\n");
    writeFileSync(join(repo, "pkg", "AGENTS.md"), "PKG RULE: this package is TypeScript.\n");
    mkdirSync(join(repo, "lib"));
    writeFileSync(join(repo, "lib", "AGENTS.md"), "LIB RULE: no dependencies.\n");
    writeFileSync(join(repo, "lib", "util.ts"), "export const x = 1;\n");
    writeFileSync(join(repo, "x.txt"), "beside pkg\n");
    const server = startServer([
      {
        check: (r) => {
          const system = systemOf(r);
          const order = ["USER RULE", "ROOT RULE", "PKG RULE"].map((rule) => system.indexOf(rule));
          expect(order.every((at) => at > 0)).toBe(true);
          expect(order).toEqual([...order].sort((a, b) => a - b));
          expect(system).toContain(`<user-instructions file="${join(configHome, "agent", "AGENTS.md")}">`);
          expect(system).toContain('<project-instructions file="pkg/AGENTS.md">');
          expect(system).toContain("The user is in: pkg/ (start there)");
          expect(system).not.toContain("LIB RULE");
        },
        toolCalls: [{ name: "read_file", arguments: { path: "x.txt" } }],
      },
      toolCallReply("read_file", { path: "lib/util.ts" }, (text) => expect(text).toBe("beside pkg\n")),
      toolCallReply("shell", { command: "cat x.txt && touch made-at-root" }, (text) => {
        expect(text).toStartWith("export const x = 1;\n");
        expect(text).toContain('<project-instructions file="lib/AGENTS.md">\nLIB RULE: no dependencies.\n</project-instructions>');
      }),
      toolCallReply("read_file", { path: "lib/util.ts" }, (text) => expect(text).toContain("beside pkg")),
      { check: (r) => expect(lastToolResult(r)).not.toContain("LIB RULE"), text: "done" },
    ]);
    const result = await agent(["run", "look around", "--base-url", server.url, "--permission-mode", "bypassPermissions"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    expect(result.stderr).not.toMatch(/warning|refused|outside/i);
    server.assertDone();
    expect(existsSync(join(repo, "made-at-root"))).toBe(true);
    // The state lives at the repository's root, where the next run from anywhere in it finds it.
    expect(existsSync(join(repo, ".agent", "state"))).toBe(true);
    expect(existsSync(join(repo, "pkg", ".agent"))).toBe(false);
    // `agent sessions` from the same subdirectory finds them there.
    const sessions = await agent(["sessions", "list"]);
    expect(sessions.code).toBe(0);
    expect(sessions.stdout).toContain("look around");
  });
});

describe(".mcp.json at the workspace root", () => {
  const evil = (marker: string) => JSON.stringify({ mcpServers: { evil: { command: "sh", args: ["-c", `touch ${marker}; touch mcp-ran`] } } });

  test("untrusted it is ignored with the standard warning; agent trust shows it; trusted its servers start; a change ends the trust", async () => {
    const { root, repo, agent } = repository();
    const marker = join(root, "mcp-marker");
    writeFileSync(join(repo, ".mcp.json"), evil(marker));

    const untrusted = await agent(["mcp", "list"]);
    expect(untrusted.code).toBe(0);
    expect(untrusted.stdout).toStartWith("no MCP servers configured");
    expect(untrusted.stderr).toMatch(/project not trusted: ignoring mcpServers from \.mcp\.json; `agent trust --workspace \S+` shows them/);
    expect(existsSync(marker)).toBe(false);

    const shown = await agent(["trust"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(".mcp.json");
    expect(shown.stdout).toContain(`MCP server evil: sh -c touch ${marker}; touch mcp-ran`);

    const trusted = await agent(["mcp", "list"]);
    expect(trusted.stdout).toMatch(/^evil/m);
    expect(trusted.stderr).not.toMatch(/not trusted/);
    expect(existsSync(join(repo, "mcp-ran"))).toBe(true);

    // Editing .mcp.json changes the fingerprint: the recorded trust no longer matches.
    writeFileSync(join(repo, ".mcp.json"), evil(`${marker}-2`));
    const changed = await agent(["mcp", "list"]);
    expect(changed.stdout).toStartWith("no MCP servers configured");
    expect(changed.stderr).toMatch(/project not trusted \(trusted before, but its settings changed since\): ignoring mcpServers from \.mcp\.json/);
    expect(readFileSync(join(repo, ".mcp.json"), "utf8")).toContain("-2");
  });
});

describe("--add-dir", () => {
  test("the file tools and the sandboxed shell reach an added directory; one not added stays out of reach", async () => {
    const { root, agent } = repository();
    const shared = join(root, "shared");
    const elsewhere = join(root, "elsewhere");
    mkdirSync(shared);
    mkdirSync(elsewhere);
    writeFileSync(join(shared, "a.txt"), "shared text\n");
    writeFileSync(join(elsewhere, "x.txt"), "not added\n");
    const server = startServer([
      toolCallReply("read_file", { path: "../shared/a.txt" }),
      toolCallReply("edit_file", { path: join(shared, "a.txt"), old_string: "shared", new_string: "edited" }, (text) => expect(text).toBe("shared text\n")),
      toolCallReply("write_file", { path: "../shared/new.txt", content: "made\n" }, (text) => expect(text).toContain("../shared/a.txt")),
      toolCallReply("shell", { command: "echo from-shell > ../shared/shell.txt; echo nope > ../elsewhere/y.txt" }, (text) =>
        expect(text).toContain("created ../shared/new.txt"),
      ),
      toolCallReply("read_file", { path: "../elsewhere/x.txt" }, (text) => expect(text).toMatch(/read-only|Permission denied|nonexistent|No such file/i)),
      { check: (r) => expect(lastToolResult(r)).toMatch(/outside the workspace/), text: "done" },
    ]);
    const result = await agent(["run", "use the shared dir", "--add-dir", "../../shared", "--base-url", server.url, "--permission-mode", "bypassPermissions"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
    expect(readFileSync(join(shared, "a.txt"), "utf8")).toBe("edited text\n");
    expect(readFileSync(join(shared, "new.txt"), "utf8")).toBe("made\n");
    expect(readFileSync(join(shared, "shell.txt"), "utf8")).toBe("from-shell\n");
    expect(existsSync(join(elsewhere, "y.txt"))).toBe(false);
  });

  test("glob and grep search an added directory too, showing its paths relative to the workspace as read_file takes them", async () => {
    const { root, repo, agent } = repository();
    const shared = join(root, "shared");
    mkdirSync(join(shared, "lib"), { recursive: true });
    writeFileSync(join(shared, "lib", "util.ts"), "export const needle = 1;\n");
    writeFileSync(join(shared, ".gitignore"), "build/\n");
    mkdirSync(join(shared, "build"));
    writeFileSync(join(shared, "build", "out.ts"), "export const needle = 2;\n");
    writeFileSync(join(repo, "pkg", "index.ts"), "import { needle } from '../../shared/lib/util';\n");
    const server = startServer([
      toolCallReply("glob", { pattern: "**/*.ts", sort: "name" }),
      toolCallReply("grep", { pattern: "needle" }, (text) => expect(text.split("\n")).toEqual(["../shared/lib/util.ts", "pkg/index.ts"])),
      toolCallReply("glob", { pattern: "*.ts", path: "../shared/lib" }, (text) =>
        expect(text.split("\n").sort()).toEqual(["../shared/lib/util.ts:1:export const needle = 1;", "pkg/index.ts:1:import { needle } from '../../shared/lib/util';"]),
      ),
      toolCallReply("grep", { pattern: "needle", path: join(shared, "lib"), output_mode: "files_with_matches" }, (text) => expect(text).toBe("../shared/lib/util.ts")),
      toolCallReply("read_file", { path: "../shared/lib/util.ts" }, (text) => expect(text).toBe("../shared/lib/util.ts")),
      { check: (r) => expect(lastToolResult(r)).toContain("export const needle = 1;"), text: "done" },
    ]);
    const result = await agent(["run", "search the shared dir", "--add-dir", "../../shared", "--base-url", server.url]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
  });

  test("a missing directory is a usage error naming it", async () => {
    const { agent } = repository();
    const result = await agent(["run", "hi", "--add-dir", "../nowhere"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--add-dir \S+nowhere does not exist/);
  });
});
