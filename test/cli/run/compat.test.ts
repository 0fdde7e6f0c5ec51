import { expect, test } from "bun:test";
import { expandCompatWords } from "../../../src/cli/argv.ts";
import { codexExecLine, configOverride } from "../../../src/cli/run/codex-exec.ts";
import { claudeToolRules } from "../../../src/cli/run/compat-tools.ts";
import { userMessageText, userMessages } from "../../../src/cli/run/stream-input.ts";
import { answerSchema } from "../../../src/cli/run/structured-output.ts";
import { settingsFlags } from "../../../src/cli/run/runtime-args.ts";

test("claude's tool lists become our rules: names mapped, `:*` prefixes, commas and spaces outside parentheses", () => {
  expect(claudeToolRules("Bash(git diff:*) Read,Edit(./src/**)  mcp__gh__*", "--allowedTools")).toEqual(["shell(git diff*)", "read_file", "edit_file(src/**)", "mcp__gh__*"]);
  expect(claudeToolRules("Bash(npm run test, lint)", "--allowedTools")).toEqual(["shell(npm run test, lint)"]);
  expect(() => claudeToolRules(" , ", "--disallowedTools")).toThrow("--disallowedTools needs a tool name");
});

test("`agent exec` and `agent -p …` are `agent run`; other lines are left as they are", () => {
  expect(codexExecLine(["--json", "hi"]).argv).toEqual(["run", "--json", "hi"]);
  expect(expandCompatWords(["-p", "hi", "--output-format", "json"])).toEqual(["run", "-p", "hi", "--output-format", "json"]);
  expect(expandCompatWords(["--model", "m", "--print", "hi"])).toEqual(["run", "--model", "m", "--print", "hi"]);
  expect(expandCompatWords(["mailbox", "list", "-p"])).toEqual(["mailbox", "list", "-p"]);
  expect(expandCompatWords(["--model", "m", "--", "-p"])).toEqual(["--model", "m", "--", "-p"]);
  // As the Claude Agent SDK starts `claude`: stream-json, no -p.
  const sdk = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--max-turns=3"];
  expect(expandCompatWords(sdk)).toEqual(["run", ...sdk]);
  expect(expandCompatWords(["--input-format=stream-json"])).toEqual(["run", "--input-format=stream-json"]);
  expect(expandCompatWords(["--output-format", "json"])).toEqual(["--output-format", "json"]);
});

test("stream-json input: string or text blocks, one turn per line, blank lines skipped, a bad line named", async () => {
  expect(userMessageText('{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}', 1)).toBe("a\nb");
  const bytes = new TextEncoder().encode('{"type":"user","message":{"content":"one"}}\n\n{"type":"user","message":{"content":"two"}}');
  // Split inside a line and inside a character's bytes, as a pipe may deliver them.
  const chunks = async function* () {
    yield bytes.slice(0, 20);
    yield bytes.slice(20);
  };
  const seen: string[] = [];
  for await (const text of userMessages(chunks())) seen.push(text);
  expect(seen).toEqual(["one", "two"]);
  expect(() => userMessageText('{"type":"assistant"}', 3)).toThrow("stdin line 3 is not a user message");
  expect(() => userMessageText("nope", 2)).toThrow("stdin line 2 is not JSON");
});

test("--json-schema: a fenced answer is read, a wrong one says why, a bad schema is a usage error", () => {
  const schema = answerSchema('{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}', undefined)!;
  expect(schema.check('```json\n{"n": 2}\n```')).toEqual({ ok: true, value: { n: 2 } });
  expect(schema.check('{"n": "2"}')).toMatchObject({ ok: false, problem: expect.stringContaining("n: ") });
  expect(schema.check("two")).toMatchObject({ ok: false, problem: expect.stringContaining("not JSON") });
  expect(() => answerSchema("{nope", undefined)).toThrow("--json-schema is not JSON");
  expect(() => answerSchema("{}", "/x")).toThrow("give one");
  expect(() => answerSchema(undefined, "/nonexistent/schema.json")).toThrow("--output-schema: cannot read");
});

test("`agent exec resume --last|ID` continues a session, as codex exec resume does, exec's options before it or after", () => {
  expect(codexExecLine(["resume", "--last", "--json", "go on"]).argv).toEqual(["run", "--json", "--continue", "go on"]);
  expect(codexExecLine(["resume", "01a2", "go on"]).argv).toEqual(["run", "--resume=01a2", "go on"]);
  // The Codex SDK's second run of a thread: options, then `resume ID`, the prompt on stdin.
  expect(codexExecLine(["--experimental-json", "--model", "m", "--cd", "/w", "resume", "01a2"]).argv).toEqual(["run", "--json", "--model=m", "--workspace=/w", "--resume=01a2"]);
  // `resume` as an option's value is that value.
  expect(codexExecLine(["--model", "resume", "hi"]).argv).toEqual(["run", "--model=resume", "hi"]);
  expect(codexExecLine(["--json", "--experimental-json", "hi"]).argv).toEqual(["run", "--json", "hi"]);
  expect(() => codexExecLine(["resume"])).toThrow("exec resume needs a session");
});

test("codex exec's --config overrides: ours where we have them (a flag on the line wins), the others warned about, never fatal", () => {
  const line = codexExecLine(
    [
      "--experimental-json",
      "--config",
      'openai_base_url="http://127.0.0.1:9/v1"',
      "-c",
      'model="from-config"',
      "--model",
      "from-flag",
      "--config",
      'sandbox_mode="read-only"',
      "--config",
      'sandbox_workspace_write.writable_roots=["/tmp/a"]',
      "--config",
      'model_reasoning_effort="high"',
      "--config",
      'web_search="live"',
      "--config",
      'approval_policy="on-request"',
      "--thread-source",
      "x",
      "hi",
    ],
    { CODEX_API_KEY: "sk-codex" },
  );
  expect(line.argv).toEqual(["run", "--json", "--model=from-flag", "--base-url=http://127.0.0.1:9/v1", "--sandbox=read-only", "--add-dir=/tmp/a", "hi"]);
  expect(line.warnings).toEqual([
    "--thread-source x: ignored (a setting of OpenAI's service that agent has no use for)",
    "--config model_reasoning_effort: not a setting agent reads; ignored (docs/compat.md#the-codex-sdk)",
    "--config web_search: not a setting agent reads; ignored (docs/compat.md#the-codex-sdk)",
  ]);
  expect(line.env).toEqual({ OPENAI_API_KEY: "sk-codex" });
  expect(codexExecLine(["--config", 'approval_policy="sometimes"', "hi"]).warnings[0]).toContain("expected one of never, on-request, on-failure, untrusted");
  expect(() => codexExecLine(["--config", "novalue", "hi"])).toThrow("is not KEY=VALUE");
  expect(() => codexExecLine(["--image", "a.png", "hi"])).toThrow("--image a.png: agent sends the model text only");
  expect(configOverride("n=3")).toEqual(["n", 3]);
  expect(configOverride("s='lit'")).toEqual(["s", "lit"]);
  expect(configOverride("t=bare words")).toEqual(["t", "bare words"]);
});

test("under exec, a writable sandbox with no approval asked (codex exec's default) is bypassPermissions in it; a permission flag or another policy keeps ours", () => {
  expect(codexExecLine(["--sandbox", "workspace-write", "hi"]).argv).toEqual(["run", "--sandbox=workspace-write", "--permission-mode=bypassPermissions", "hi"]);
  expect(codexExecLine(["--config", 'sandbox_mode="danger-full-access"', "hi"]).argv).toEqual(["run", "--sandbox=danger-full-access", "--permission-mode=bypassPermissions", "hi"]);
  expect(codexExecLine(["-s", "workspace-write", "--config", 'approval_policy="untrusted"', "hi"]).argv).toEqual(["run", "--sandbox=workspace-write", "hi"]);
  expect(codexExecLine(["--sandbox", "workspace-write", "--permission-mode", "acceptEdits", "hi"]).argv).toEqual(["run", "--sandbox=workspace-write", "--permission-mode=acceptEdits", "hi"]);
  expect(codexExecLine(["--sandbox", "read-only", "hi"]).argv).toEqual(["run", "--sandbox=read-only", "hi"]);
});

test("the permission shortcuts of claude -p and codex exec are our modes; one of them, or our flags", () => {
  expect(settingsFlags({ "dangerously-skip-permissions": true })).toMatchObject({ permissionMode: "bypassPermissions", sandbox: undefined });
  expect(settingsFlags({ "full-auto": true })).toMatchObject({ permissionMode: "bypassPermissions", sandbox: "workspace-write" });
  expect(settingsFlags({ "dangerously-bypass-approvals-and-sandbox": true })).toMatchObject({ permissionMode: "bypassPermissions", sandbox: "danger-full-access" });
  expect(settingsFlags({ "dangerously-skip-permissions": true, sandbox: "read-only" })).toMatchObject({ sandbox: "read-only" });
  expect(() => settingsFlags({ "full-auto": true, "permission-mode": "plan" })).toThrow("--full-auto sets the permission mode and the sandbox, and so does --permission-mode: give one of them");
  expect(() => settingsFlags({ "full-auto": true, "dangerously-skip-permissions": true })).toThrow("give one of them");
  expect(settingsFlags({ allowedTools: "Bash(ls:*)", allow: ["read_file"] })).toMatchObject({ allow: ["read_file", "shell(ls*)"] });
});
