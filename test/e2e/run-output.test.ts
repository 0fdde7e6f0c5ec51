import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedReply } from "../support/model-server.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { parseResult, parseStream, runSetup, scriptedServers } from "./run-fixture.ts";

// `agent run` on the compiled binary against the scripted model server: the model
// writes a file with a tool call, then answers; each output format is checked
// against its schema.

const startServer = scriptedServers();

/** Two model turns: write_file, then a final answer that can see the tool's result. */
function createFileScript(): ScriptedReply[] {
  return [
    {
      toolCalls: [{ id: "call_write", name: "write_file", arguments: { path: "notes/hello.txt", content: "Hello, agent!\n" } }],
      usage: { prompt_tokens: 100, completion_tokens: 20 },
      check: (request) => {
        expect(request.identity).toBe("lead");
        expect(request.body.messages.at(-1)).toEqual({ role: "user", content: "Create notes/hello.txt" });
        expect(request.body.tools?.map((t) => t.function.name)).toContain("write_file");
      },
    },
    {
      text: "Created notes/hello.txt.",
      usage: { prompt_tokens: 150, completion_tokens: 8 },
      check: (request) => {
        const last = request.body.messages.at(-1) as { role: string; tool_call_id: string; content: string };
        expect(last).toMatchObject({ role: "tool", tool_call_id: "call_write" });
        expect(last.content).toContain("notes/hello.txt");
      },
    },
  ];
}

describe("agent run creates a file through tool calls", () => {
  test("text: the final answer on stdout, a tool-call line on stderr, the file written, the history kept", async () => {
    const server = startServer(createFileScript());
    const { run, workspace, sessionDir } = runSetup();
    const result = await run(["Create notes/hello.txt", "--base-url", server.url, "--permission-mode", "acceptEdits"]);
    expect(result.stderr).toBe('[lead] write_file {"path":"notes/hello.txt","content":"Hello, agent!\\n"}\n');
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "Created notes/hello.txt.\n" });
    expect(readFileSync(join(workspace, "notes", "hello.txt"), "utf8")).toBe("Hello, agent!\n");
    expect(existsSync(join(sessionDir(), "agents", "lead.jsonl"))).toBe(true);
    expect(existsSync(join(sessionDir(), "runtime.lock"))).toBe(false);
    server.assertDone();
  });

  test("--output json: one object, validated, with summed usage", async () => {
    const server = startServer(createFileScript());
    const { run, workspace, stateDir } = runSetup();
    const result = await run(["--prompt", "Create notes/hello.txt", "--output", "json", "--base-url", server.url, "--permission-mode", "acceptEdits", "--model", "scripted-model"]);
    expect(result.code).toBe(0);
    const json = parseResult(result.stdout);
    expect(json).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Created notes/hello.txt.",
      turns: 2,
      usage: { input_tokens: 250, output_tokens: 28 },
      agent: "lead",
      model: "scripted-model",
      workspace,
      state_dir: join(stateDir, "sessions", json.session_id),
    });
    expect(server.requests.map((r) => r.body.model)).toEqual(["scripted-model", "scripted-model"]);
    server.assertDone();
  });

  test("--output stream-json: every line validated, in order, the last one the json result", async () => {
    const server = startServer(createFileScript());
    const { run } = runSetup();
    const result = await run(["-", "--output", "stream-json", "--quiet", "--base-url", server.url, "--permission-mode", "acceptEdits"], {
      stdin: "Create notes/hello.txt",
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = parseStream(result.stdout);
    expect(lines.map((l) => l.type)).toEqual([
      "system",
      "user",
      "model_request",
      "tool_call",
      "tool_result",
      "model_request",
      "assistant",
      "result",
    ]);
    expect(lines[3]).toEqual({
      type: "tool_call",
      agent: "lead",
      id: "call_write",
      name: "write_file",
      arguments: '{"path":"notes/hello.txt","content":"Hello, agent!\\n"}',
    });
    expect(lines[4]).toMatchObject({ type: "tool_result", id: "call_write", name: "write_file", is_error: false });
    expect(lines[6]).toEqual({ type: "assistant", agent: "lead", text: "Created notes/hello.txt." });
    const [init, last] = [lines[0], lines.at(-1)];
    expect(last).toMatchObject({ subtype: "success", is_error: false, turns: 2, result: "Created notes/hello.txt." });
    // One run, one key: the init line and the result name the same turn.
    expect((init as { idempotency_key: string }).idempotency_key).toBe((last as { idempotency_key: string }).idempotency_key);
    server.assertDone();
  });

  test("a refused tool call comes back to the model, and the run goes on (default mode, headless)", async () => {
    const server = startServer([
      { toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "x.txt", content: "x" } }] },
      {
        text: "I was not allowed to write x.txt.",
        check: (request) => {
          const last = request.body.messages.at(-1) as { role: string; content: string };
          expect(last.role).toBe("tool");
          expect(last.content.toLowerCase()).toContain("denied");
        },
      },
    ]);
    const { run, workspace } = runSetup();
    const result = await run(["write x.txt", "--base-url", server.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("I was not allowed to write x.txt.\n");
    expect(result.stderr).toContain("[lead] write_file failed: ");
    expect(existsSync(join(workspace, "x.txt"))).toBe(false);
    server.assertDone();
  });
});

describe("runs that end in error print the result and exit non-zero", () => {
  test("the turn cap: error_max_turns, exit 1, the JSON still printed", async () => {
    const server = startServer([{ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }]);
    const { run } = runSetup();
    const result = await run(["look around", "--max-turns", "1", "--output", "json", "--quiet", "--base-url", server.url]);
    expect(result.code).toBe(1);
    const json = parseResult(result.stdout);
    expect(json).toMatchObject({ subtype: "error_max_turns", is_error: true, turns: 1 });
    expect(result.stderr).toMatch(/^agent: run ended with error_max_turns: .*--max-turns[^\n]*\n$/);
    server.assertDone();
  });

  test("--timeout interrupts a slow model: error_interrupted, exit 1, naming the timeout", async () => {
    const server = startServer([{ text: "too late", delayMs: 5_000 }]);
    const { run } = runSetup();
    const started = Date.now();
    const result = await run(["hurry", "--timeout", "500ms", "--output", "json", "--base-url", server.url]);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result.code).toBe(1);
    const json = parseResult(result.stdout);
    expect(json).toMatchObject({ subtype: "error_interrupted", is_error: true });
    expect(json.result).toStartWith("timed out (--timeout 500ms)");
    expect(result.stderr).toMatch(/^agent: run ended with error_interrupted: timed out \(--timeout 500ms\)/);
    server.assertDone();
  });

  test("a UserPromptSubmit hook that exits 2: error_blocked, exit 1, no model call", async () => {
    const server = startServer([]);
    const { run, workspace } = runSetup();
    const hooks = { UserPromptSubmit: [{ command: "grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0" }] };
    await Bun.write(join(workspace, ".agent", "config.json"), JSON.stringify({ hooks }));
    const result = await run(["the password is hunter2", "--output", "json", "--base-url", server.url, "--trust-project"]);
    expect(result.code).toBe(1);
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "error_blocked", is_error: true, turns: 0, result: expect.stringContaining("no secrets in prompts") });
    server.assertDone();
  });

  test("in text mode an error run prints nothing on stdout", async () => {
    const server = startServer([{ toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] }]);
    const { run } = runSetup();
    const result = await run(["look around", "--max-turns", "1", "--quiet", "--base-url", server.url]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^agent: run ended with error_max_turns: [^\n]+\n$/);
    server.assertDone();
  });

  test("SIGINT interrupts the run: the result is still printed, exit 130", async () => {
    const server = startServer([{ text: "too late", delayMs: 5_000 }]);
    const { workspace, stateDir, sessionDir } = runSetup();
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "wait", "--output", "json", "--quiet", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url],
      { env: { ...process.env, OPENAI_API_KEY: "k", NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" },
    );
    // Once the request is in flight, the run is past start-up and owns the state dir.
    while (server.requests.length === 0) await Bun.sleep(20);
    child.kill("SIGINT");
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(code).toBe(130);
    expect(parseResult(stdout)).toMatchObject({ subtype: "error_interrupted", is_error: true, result: expect.stringMatching(/^interrupted by SIGINT/) });
    expect(stderr).toMatch(/^agent: run ended with error_interrupted: interrupted by SIGINT/);
    expect(existsSync(join(sessionDir(), "runtime.lock"))).toBe(false);
    server.assertDone();
  });
});
