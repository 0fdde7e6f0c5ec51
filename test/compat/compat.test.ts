import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, type ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY } from "../e2e/agent-binary.ts";
import { scriptedServers } from "../e2e/run-fixture.ts";

// Shell scripts written the way people script `claude -p` and `codex exec`
// (shapes from their public docs, scripts our own) run unchanged: `agent` on the
// PATH is the compiled binary, the endpoint a scripted model server, the working
// directory a fresh workspace. Each script checks its output with jq and prints
// what the test compares.

const startServer = scriptedServers();

async function runScript(name: string, script: ScriptedReply[], files: Record<string, string> = {}) {
  const server = startServer(script);
  const root = realpathSync(tempDir("agent-compat-"));
  const bin = join(root, "bin");
  const workspace = join(root, "workspace");
  mkdirSync(bin);
  mkdirSync(workspace);
  symlinkSync(AGENT_BINARY, join(bin, "agent"));
  for (const [path, content] of Object.entries(files)) writeFileSync(join(workspace, path), content);
  const child = Bun.spawn(["bash", join(import.meta.dir, name)], {
    cwd: workspace,
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test-key",
      AGENT_STATE_DIR: join(root, "state"),
      NO_COLOR: "1",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr, server, workspace };
}

const toolNames = (request: RecordedRequest) => request.body.tools?.map((tool) => tool.function.name) ?? [];

describe("claude -p scripts", () => {
  test("--output-format json: num_turns and total_cost_usd are numbers", async () => {
    const { code, stdout, stderr, server } = await runScript("claude-json.sh", [{ text: "hi there" }]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("1\nnumber\nhi there\n");
    server.assertDone();
  });

  test("--output-format stream-json: init lists the tools; a tool call is an assistant tool_use, then a user tool_result", async () => {
    const { code, stdout, stderr, server } = await runScript("claude-stream.sh", [
      { toolCalls: [{ id: "call_ls", name: "shell", arguments: { command: "ls" } }] },
      { text: "one file: a.txt", check: (r) => expect(String(r.body.messages.findLast((m) => m.role === "tool")!.content)).toContain("a.txt") },
    ], { "a.txt": "a\n" });
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("one file: a.txt\n");
    server.assertDone();
  });

  test("--input-format stream-json as the SDK writes it: initialize (its system prompt) answered, two user lines two turns of one session, one result line each, read before the next line", async () => {
    const { code, stdout, stderr, server } = await runScript("claude-stream-input.sh", [
      {
        text: "first answer",
        check: (r) => {
          expect(String(r.body.messages[0]!.content)).toStartWith("You are scripted.");
          expect(r.body.messages.at(-1)).toEqual({ role: "user", content: "first question" });
        },
      },
      {
        text: "second answer",
        check: (r) => {
          // The same session: the first turn is in the history the second one sends.
          const contents = r.body.messages.map((m) => m.content);
          expect(contents).toContain("first question");
          expect(contents).toContain("first answer");
          expect(r.body.messages.at(-1)).toEqual({ role: "user", content: "second question" });
        },
      },
    ]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("first answer\nsecond answer\n");
    server.assertDone();
  });

  test("--json-schema: a first answer that does not match gets one corrective turn, then structured_output", async () => {
    const { code, stdout, stderr, server } = await runScript("claude-json-schema.sh", [
      { text: "There are three files.", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain('"required":["count"]') },
      { text: '```json\n{"count": 3}\n```', check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("does not match the required JSON Schema") },
    ]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe('{"count":3}\n');
    server.assertDone();
  });

  test("--session-id names a session to start and continue; --fork-session continues a copy, -r the original", async () => {
    const userTexts = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === "user").map((m) => m.content);
    const { code, stdout, stderr, server } = await runScript("claude-sessions.sh", [
      { text: "ok 7", check: (r) => expect(userTexts(r)).toEqual(["remember 7"]) },
      { text: "ok 8", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "remember 8"]) },
      { text: "7 and 8", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "remember 8", "which numbers?"]) },
      // The fork's turn is not in the original.
      { text: "still 7 and 8", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "remember 8", "and now?"]) },
    ]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("forked\n");
    server.assertDone();
  });

  test("--allowedTools Bash runs a command that writes a file (in the workspace only); --allow shell still denies that write headless", async () => {
    const { code, stdout, stderr, server } = await runScript("claude-allowed-bash.sh", [
      { toolCalls: [{ name: "shell", arguments: { command: "echo hi > s.txt" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "echo out > ../outside.txt" } }] },
      { text: "saved" },
      { toolCalls: [{ name: "shell", arguments: { command: "echo no > t.txt" } }] },
      { text: "not saved", check: (r) => expect(String(r.body.messages.findLast((m) => m.role === "tool")!.content)).toContain("t.txt") },
    ]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("hi\necho no > t.txt\n");
    server.assertDone();
  });

  test("--disallowedTools Bash: the request's tools lack shell", async () => {
    const { code, stderr, server } = await runScript("claude-disallowed.sh", [
      {
        text: "hello",
        check: (r) => {
          expect(toolNames(r)).toContain("read_file");
          expect(toolNames(r)).not.toContain("shell");
        },
      },
    ]);
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    server.assertDone();
  });
});

describe("codex exec scripts", () => {
  test("agent exec --json: thread.started, turn.started, items, turn.completed; -o writes the last message; exec resume --last continues the thread", async () => {
    const { code, stdout, stderr, server } = await runScript("codex-exec.sh", [
      { toolCalls: [{ id: "call_ls", name: "shell", arguments: { command: "ls" } }] },
      { text: "a.txt is here" },
      { text: "again", check: (r) => expect(r.body.messages.some((m) => m.content === "run ls")).toBe(true) },
    ], { "a.txt": "a\n" });
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("a.txt is here\na.txt is here\n");
    server.assertDone();
  });

  test("agent exec -C DIR / --cd DIR: codex exec's working root is the workspace, whatever the current directory", async () => {
    const { code, stdout, stderr, server } = await runScript("codex-exec-cd.sh", [
      { toolCalls: [{ id: "call_ls", name: "shell", arguments: { command: "ls" } }] },
      { text: "listed", check: (r) => expect(String(r.body.messages.at(-1)?.content)).toContain("a.txt") },
      { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "read", check: (r) => expect(String(r.body.messages.at(-1)?.content)).toContain("from the repo") },
    ], { "a.txt": "from the repo\n" });
    expect({ code, errors: stderr.split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ code: 0, errors: [] });
    expect(stdout).toBe("listed\nread\n");
    server.assertDone();
  });
});

describe("--input-format stream-json and the stop", () => {
  test("--timeout while waiting for the next line: error_interrupted after the turns done, not a hang on the open pipe", async () => {
    const server = startServer([{ text: "first answer" }]);
    const root = realpathSync(tempDir("agent-compat-"));
    const child = Bun.spawn(
      [AGENT_BINARY, "-p", "--input-format", "stream-json", "--output-format", "json", "--timeout", "2", "--workspace", root, "--state-dir", join(root, "state")],
      { env: { ...process.env, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" }, stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    );
    child.stdin.write('{"type":"user","message":{"role":"user","content":"first question"}}\n');
    await child.stdin.flush();
    // stdin stays open: a driver that has nothing more to say yet.
    const started = Date.now();
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    child.stdin.end();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(code).toBe(1);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ subtype: "error_interrupted", is_error: true, num_turns: 1 });
    expect(result.result).toContain("stopped waiting for the next message on stdin");
    server.assertDone();
  });
});
