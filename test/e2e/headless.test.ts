import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { expectOneLineError, parseErrorResult, parseResult, runSetup, scriptedServers } from "./run-fixture.ts";

// The headless contract scripts rely on, on the compiled binary: piped context,
// a JSON error for every failure, the last message in a file, the denied calls
// in the result, and --timeout in bare seconds (Ctrl-C's exit 130: run-output.test.ts).

const startServer = scriptedServers();

describe("piped stdin without a PROMPT", () => {
  test("is the prompt (echo \"fix the test\" | agent run); empty, it is refused", async () => {
    const server = startServer([{ text: "Fixed." }]);
    const { run } = runSetup();
    const result = await run(["--base-url", server.url], { stdin: "fix the test\n" });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "Fixed.\n" });
    expect(server.requests[0]?.body.messages.at(-1)).toEqual({ role: "user", content: "fix the test\n" });
    server.assertDone();
    expectOneLineError(await run([], { stdin: " \n" }), 2, /the prompt from stdin is empty/);
  });
});

describe("piped stdin with a PROMPT", () => {
  test("is appended to the prompt as context (git diff | agent run \"review this\")", async () => {
    const server = startServer([{ text: "Looks fine." }]);
    const { run } = runSetup();
    const diff = "diff --git a/x.ts b/x.ts\n-old\n+new\n";
    const result = await run(["review this", "--base-url", server.url], { stdin: diff });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "Looks fine.\n" });
    expect(server.requests[0]?.body.messages.at(-1)).toEqual({ role: "user", content: `review this\n\n<stdin>\n${diff}</stdin>` });
    server.assertDone();
  });
});

describe("--output json prints one JSON error object for failures before the run", () => {
  test("a bad flag: exit 2", async () => {
    const { run } = runSetup();
    const result = await run(["--output", "json", "--bogus", "hi"]);
    expect(result.code).toBe(2);
    expect(parseErrorResult(result.stdout)).toEqual({
      type: "result",
      subtype: "error_usage",
      is_error: true,
      result: 'unknown option --bogus for "agent run"; run `agent run --help`',
      exit_code: 2,
      exit_meaning: "usage or configuration error",
      error_code: "USAGE",
    });
    expectOneLineError(result, 2, /unknown option --bogus/);
    // `--output=json` and stream-json too; text keeps stdout empty.
    expect(parseErrorResult((await run(["--output=stream-json", "--bogus"])).stdout).exit_code).toBe(2);
    expect((await run(["--bogus", "x"])).stdout).toBe("");
  });

  test("a missing key: exit 3; a busy session: exit 4", async () => {
    const { run, newSessionDir } = runSetup();
    const noKey = await run(["hi", "--output", "json"], { env: { OPENAI_API_KEY: undefined } });
    expect(noKey.code).toBe(3);
    expect(parseErrorResult(noKey.stdout)).toMatchObject({ subtype: "error_model", exit_code: 3, error_code: "MISSING_API_KEY" });

    // A session a runtime owns, continued with -c.
    const lock = await RuntimeLock.acquire(newSessionDir());
    try {
      const busy = await run(["hi", "-c", "--output", "json"]);
      expect(busy.code).toBe(4);
      expect(parseErrorResult(busy.stdout)).toMatchObject({ subtype: "error_busy", is_error: true, exit_code: 4 });
    } finally {
      await lock.release();
    }
  });
});

describe("--output-last-message FILE", () => {
  test("writes the final answer; a missing directory is exit 2 before anything runs", async () => {
    const server = startServer([{ text: "The answer is 42." }]);
    const { run, root } = runSetup();
    const file = join(root, "last.txt");
    writeFileSync(file, "stale");
    const result = await run(["answer", "--output-last-message", file, "--base-url", server.url]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "The answer is 42.\n" });
    expect(readFileSync(file, "utf8")).toBe("The answer is 42.\n");
    server.assertDone();
    expectOneLineError(await run(["answer", "--output-last-message", join(root, "nope", "last.txt")]), 2, /the directory .*nope does not exist/);
  });
});

describe("tools denied whole", () => {
  test("--deny shell (no pattern) and --disallowedTools Read: the model is not offered them; a pattern rule hides nothing", async () => {
    const names = (r: { body: { tools?: Array<{ function: { name: string } }> } }) => r.body.tools?.map((tool) => tool.function.name) ?? [];
    const server = startServer([
      {
        text: "ok",
        check: (r) => {
          expect(names(r)).not.toContain("shell");
          expect(names(r)).not.toContain("read_file");
          expect(names(r)).toContain("grep");
        },
      },
      { text: "ok", check: (r) => expect(names(r)).toContain("shell") },
    ]);
    const { run } = runSetup();
    expect((await run(["hi", "--deny", "shell", "--disallowedTools", "Read", "--base-url", server.url])).code).toBe(0);
    expect((await run(["hi", "--deny", "shell(git push*)", "--base-url", server.url])).code).toBe(0);
    server.assertDone();
  });
});

describe("permission_denials", () => {
  test("each denied call: agent, tool, input summary and reason, and claude -p's tool_name, tool_use_id and tool_input", async () => {
    const server = startServer([
      {
        toolCalls: [
          { id: "call_push", name: "shell", arguments: { command: "git push --force" } },
          { id: "call_write", name: "write_file", arguments: { path: "a.txt", content: "x" } },
        ],
      },
      { text: "I could not." },
    ]);
    const { run } = runSetup();
    const result = await run(["push it", "--output", "json", "--deny", "shell(git push*)", "--base-url", server.url]);
    expect(result.code).toBe(0);
    const json = parseResult(result.stdout);
    expect(json.permission_denials).toEqual([
      {
        agent: "lead",
        tool: "shell",
        input: "git push --force",
        reason: expect.stringContaining('matches the deny rule "shell(git push*)"'),
        tool_name: "shell",
        tool_use_id: "call_push",
        tool_input: { command: "git push --force" },
      },
      {
        agent: "lead",
        tool: "write_file",
        input: "a.txt",
        reason: expect.stringContaining("no TTY to ask"),
        tool_name: "write_file",
        tool_use_id: "call_write",
        tool_input: { path: "a.txt", content: "x" },
      },
    ]);
    server.assertDone();
  });
});

describe("--timeout", () => {
  test("a bare number is seconds", async () => {
    const server = startServer([{ text: "slow", delayMs: 30_000 }]);
    const { run } = runSetup();
    const result = await run(["hi", "--timeout", "1", "--output", "json", "--base-url", server.url]);
    expect(result.code).toBe(1);
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "error_interrupted", result: expect.stringMatching(/^timed out \(--timeout 1\)/) });
  });
});
