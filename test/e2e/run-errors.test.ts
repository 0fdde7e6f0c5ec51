import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { runAgent } from "./agent-binary.ts";
import { expectOneLineError, parseResult, runSetup, scriptedServers } from "./run-fixture.ts";

// What a user can get wrong around `agent run`, on the compiled binary: each is
// one line naming the cause and the fix, with the documented exit code.

const startServer = scriptedServers();

/** A port nothing listens on: taken from a server that is then stopped. */
async function closedPortUrl(): Promise<string> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const url = `http://127.0.0.1:${probe.port}/v1`;
  await probe.stop(true);
  return url;
}

describe("usage errors: exit 2 before anything runs", () => {
  test.each([
    [[], /no prompt: give it as an argument/],
    [["a", "--prompt", "b"], /not both/],
    [["  "], /the prompt from the PROMPT argument is empty/],
    [["a", "b"], /too many arguments for "agent run"/],
    [["a", "--bogus"], /unknown option --bogus for "agent run"/],
    [["a", "--max-turns", "0"], /invalid value "0" for --max-turns/],
    [["a", "--output", "yaml"], /invalid value "yaml" for --output: expected one of text, json, stream-json/],
    [["a", "--permission-mode", "yolo"], /for --permission-mode: expected one of default, acceptEdits, plan, bypassPermissions/],
    [["a", "--timeout", "soon"], /invalid duration "soon"/],
    [["a", "--base-url", "localhost:1234"], /for --base-url: expected an http\(s\) URL/],
    [["a", "--record", "r.jsonl", "--replay", "p.jsonl"], /--record and --replay cannot be used together/],
  ])("agent run %j", async (args, pattern) => {
    const { run } = runSetup();
    const result = await run(args as string[]);
    expectOneLineError(result, 2, pattern);
    expect(result.stdout).toBe("");
  });

  test("empty stdin, a missing workspace, --quiet with --verbose", async () => {
    const { run, root } = runSetup();
    expectOneLineError(await run(["-"], { stdin: "" }), 2, /the prompt from stdin is empty/);
    const missing = await runAgent(["run", "a", "--workspace", join(root, "nope")], { env: { OPENAI_API_KEY: "k" } });
    expectOneLineError(missing, 2, /workspace .*nope does not exist; create it/);
    // --verbose also asks for the stack trace under the error line.
    const both = await run(["a", "--quiet", "--verbose"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toStartWith("agent: --quiet and --verbose contradict each other; give one\n");
  });

  test("a config.json with an unknown key", async () => {
    const { run, workspace } = runSetup();
    await Bun.write(join(workspace, ".agent", "config.json"), JSON.stringify({ maxTurn: 3 }));
    expectOneLineError(await run(["a"]), 2, /config file .*config\.json: unknown key "maxTurn" \(known keys: .*\); fix it or remove it/);
  });
});

describe("model errors: exit 3, one line", () => {
  test("no API key", async () => {
    const { run } = runSetup();
    const result = await run(["hello"], { env: { OPENAI_API_KEY: undefined } });
    expectOneLineError(result, 3, /no API key: set OPENAI_API_KEY/);
    expect(result.stdout).toBe("");
  });

  test("an endpoint nobody listens on: no stack trace", async () => {
    const { run } = runSetup();
    const url = await closedPortUrl();
    const result = await run(["hello", "--quiet", "--base-url", url]);
    const host = new URL(url).host.replace(/[.]/g, "\\.");
    expectOneLineError(result, 3, new RegExp(`cannot reach the model endpoint at ${host} after 5 attempts \\(last: connection refused\\): check --base-url`));
    expect(result.stdout).toBe("");
  }, 60_000);

  test("500s until the retries are spent: exit 3, and the JSON says error_model", async () => {
    // Retry-After: 0 keeps the test fast; the retry count is the client's default.
    const fail = { status: 500, headers: { "retry-after": "0" }, body: { error: { message: "overloaded" } } };
    const server = startServer([fail, fail, fail, fail, fail]);
    const { run } = runSetup();
    const result = await run(["hello", "--output", "json", "--base-url", server.url]);
    expect(result.code).toBe(3);
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "error_model", is_error: true, turns: 1 });
    const lines = result.stderr.trimEnd().split("\n");
    // Each retry is announced on stderr, then the one error line.
    expect(lines.filter((l) => l.startsWith("[lead] model request failed (HTTP 500"))).toHaveLength(4);
    expect(lines.at(-1)).toMatch(/^agent: run ended with error_model: the model endpoint .* failed after 5 attempts \(last: HTTP 500: overloaded\)/);
    server.assertDone();
  });
});

describe("a session's runtime lock", () => {
  test("busy: exit 4 naming the owner; nothing sent to the model", async () => {
    const server = startServer([]);
    const { run, newSessionDir } = runSetup();
    const lock = await RuntimeLock.acquire(newSessionDir());
    try {
      const result = await run(["hello", "-c", "--base-url", server.url]);
      expectOneLineError(result, 4, new RegExp(`state dir .* is busy, owned by pid ${process.pid} on host .*--wait-lock`));
    } finally {
      await lock.release();
    }
    server.assertDone();
  });

  test("--wait-lock waits for the owner to finish, then runs", async () => {
    const server = startServer([{ text: "done" }]);
    const { run, newSessionDir } = runSetup();
    const lock = await RuntimeLock.acquire(newSessionDir());
    const released = Bun.sleep(700).then(() => lock.release());
    const result = await run(["hello", "-c", "--wait-lock", "--base-url", server.url]);
    await released;
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    server.assertDone();
  });

  test("an apiKey in a world-readable config.local.json is a warning, not a failure", async () => {
    const server = startServer([{ text: "ok" }]);
    const { run, workspace } = runSetup();
    const path = join(workspace, ".agent", "config.local.json");
    mkdirSync(join(workspace, ".agent"));
    writeFileSync(path, JSON.stringify({ apiKey: "from-file", baseUrl: server.url }));
    chmodSync(path, 0o644);
    // A local file is the project's until trusted (a repository can ship one): this is the user's own.
    const result = await run(["hi", "--trust-project"], { env: { OPENAI_API_KEY: undefined } });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "ok\n" });
    expect(result.stderr).toMatch(/^agent: warning: config file .* holds apiKey but is readable by others \(mode 0644\)/);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer from-file");
    server.assertDone();
  });
});
