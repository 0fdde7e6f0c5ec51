import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runAgent } from "./agent-binary.ts";
import { expectOneLineError, parseStream, runSetup, scriptedServers } from "./run-fixture.ts";

// Configuration levels on the compiled binary: what each file contributes, what
// `agent config show` says about it, and that a key never leaks into output or state.

const startServer = scriptedServers();

function levels() {
  const setup = runSetup();
  const home = join(setup.root, "home");
  const files = {
    user: join(home, ".config", "agent", "config.json"),
    project: join(setup.workspace, ".agent", "config.json"),
    local: join(setup.workspace, ".agent", "config.local.json"),
  };
  const write = (level: keyof typeof files, text: unknown) => {
    mkdirSync(join(files[level], ".."), { recursive: true });
    writeFileSync(files[level], typeof text === "string" ? text : JSON.stringify(text), { mode: 0o600 });
  };
  // The levels of the user's own checkout: its project files apply (test/e2e/trust.test.ts: untrusted).
  const env = { HOME: home, XDG_CONFIG_HOME: undefined, AGENT_TRUST_PROJECT: "1" };
  const show = (args: string[] = [], extraEnv: Record<string, string | undefined> = {}) =>
    runAgent(["config", "show", "--workspace", setup.workspace, ...args], { env: { ...env, OPENAI_API_KEY: undefined, ...extraEnv } });
  return { ...setup, home, files, write, env, show };
}

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  let text = "";
  const visit = (path: string) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else text += readFileSync(path, "utf8");
  };
  visit(dir);
  return text;
}

describe("agent config show", () => {
  test("--json shows each level's contribution and where each setting came from; keys redacted", async () => {
    const w = levels();
    w.write("user", { apiKey: "sk-user-SECRET-1", model: "user-model", maxTurns: 3, permissions: { allow: ["read_file"] } });
    // Comments and a trailing comma: the project's file is JSONC.
    w.write("project", '{\n  // shared by the team\n  "model": "project-model",\n  "headers": { "X-Title": "demo" },\n  "permissions": { "deny": ["shell(git push*)"] },\n  "mcpServers": { "gh": { "command": "gh-mcp", "env": { "TOKEN": "tok-SECRET-4" } } },\n}\n');
    w.write("local", { maxTurns: 5, headers: { Authorization: "Bearer sk-local-SECRET-2" } });
    const result = await w.show(["--json", "--allow", "shell(npm test)"], { AGENT_MODEL: "env-model" });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("SECRET");
    const report = JSON.parse(result.stdout);
    expect(report.files.map((f: { level: string; exists: boolean }) => [f.level, f.exists])).toEqual([
      ["user", true],
      ["project", true],
      ["local", true],
    ]);
    expect(report.files[0]).toMatchObject({ path: w.files.user, settings: { apiKey: "[REDACTED]", model: "user-model" } });
    expect(report.files[1].settings).toEqual({
      model: "project-model",
      headers: { "X-Title": "demo" },
      permissions: { deny: ["shell(git push*)"] },
      mcpServers: { gh: "[REDACTED]" },
    });
    expect(report.files[2].settings).toEqual({ maxTurns: 5, headers: { Authorization: "[REDACTED]" } });
    expect(report.settings).toMatchObject({
      model: { value: "env-model", level: "env", from: "AGENT_MODEL" },
      apiKey: { value: "[REDACTED]", level: "user", from: w.files.user },
      maxTurns: { value: 5, level: "local" },
      permissionMode: { value: "default", level: "default" },
      "headers.X-Title": { value: "demo", level: "project" },
      "headers.Authorization": { value: "[REDACTED]", level: "local" },
      "permissions.allow": {
        value: ["read_file", "shell(npm test)"],
        levels: [
          { level: "user", value: ["read_file"] },
          { level: "flag", from: "--allow", value: ["shell(npm test)"] },
        ],
      },
      "permissions.deny": { value: ["shell(git push*)"], levels: [{ level: "project" }] },
      mcpServers: { value: ["gh"], levels: [{ level: "project", value: ["gh"] }] },
      "mailbox.maxContentBytes": { level: "default" },
    });

    const text = await w.show([], { OPENAI_API_KEY: "sk-env-SECRET-3" });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain("SECRET");
    expect(text.stdout).toMatch(/^apiKey +"\[REDACTED\]" +env OPENAI_API_KEY$/m);
    expect(text.stdout).toMatch(/^maxTurns +5 +local$/m);
    expect(text.stdout).toContain(`project  ${w.files.project}`);
  });

  test("an apiKey in the project's .agent/config.json is exit 2, for config show and run alike", async () => {
    const w = levels();
    w.write("project", { apiKey: "sk-project-SECRET" });
    const shown = await w.show();
    expectOneLineError(shown, 2, /holds apiKey, but it is the project's shared file: keys belong in the environment or your user config/);
    expect(shown.stderr).not.toContain("SECRET");
    const run = await w.run(["hi"], { env: w.env });
    expectOneLineError(run, 2, /config\.json holds apiKey/);
  });

  test("an unknown key names the file", async () => {
    const w = levels();
    w.write("user", { modle: "x" });
    expectOneLineError(await w.show(), 2, new RegExp(`config file ${w.files.user}: unknown key "modle"`));
  });
});

describe("agent run with config levels", () => {
  test("headers reach the endpoint; the key never reaches stdout, stderr, the history or any state file", async () => {
    const server = startServer([{ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }, { text: "done" }]);
    const w = levels();
    w.write("user", { headers: { "X-Title": "user-title", "X-Extra": "1" } });
    w.write("project", { headers: { "X-Title": "agent-e2e" }, appendSystemPrompt: "Answer in English." });
    const key = "sk-e2e-NEVER-SHOWN-7d1f";
    const result = await w.run(["look around", "--output", "stream-json", "--verbose", "--base-url", server.url], {
      env: { ...w.env, OPENAI_API_KEY: key },
    });
    expect(result.code).toBe(0);
    parseStream(result.stdout);
    const request = server.requests[0];
    expect(request?.headers["x-title"]).toBe("agent-e2e");
    expect(request?.headers["x-extra"]).toBe("1");
    expect(request?.headers.authorization).toBe(`Bearer ${key}`);
    for (const text of [result.stdout, result.stderr, allText(w.stateDir), allText(w.workspace)]) expect(text).not.toContain(key);
    server.assertDone();
  });
});
