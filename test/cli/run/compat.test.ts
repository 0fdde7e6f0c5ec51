import { expect, test } from "bun:test";
import { expandCompatWords } from "../../../src/cli/argv.ts";
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
  expect(expandCompatWords(["exec", "--json", "hi"])).toEqual(["run", "--json", "hi"]);
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

test("`agent exec resume --last|ID` continues a session, as codex exec resume does", () => {
  expect(expandCompatWords(["exec", "resume", "--last", "--json", "go on"])).toEqual(["run", "--continue", "--json", "go on"]);
  expect(expandCompatWords(["exec", "resume", "01a2", "go on"])).toEqual(["run", "--resume", "01a2", "go on"]);
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
