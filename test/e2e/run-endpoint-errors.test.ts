import { describe, expect, test } from "bun:test";
import type { ScriptedReply } from "../support/model-server.ts";
import { type SocketBehaviour, startSocketServer } from "../support/socket-server.ts";
import { parseStream, runSetup, scriptedServers } from "./run-fixture.ts";

// The endpoint-error table of docs/models.md, row by row, on the compiled
// binary: what the endpoint answers, the one line `agent run` ends with, exit 3.

const startServer = scriptedServers();

/** `agent run` against `url`: its exit code and stderr, which must be exactly one line. */
async function runAgainst(url: string, extra: string[] = ["--quiet"]) {
  const { run } = runSetup();
  const result = await run(["hello", "--base-url", url, ...extra]);
  return result;
}

function expectEndedWith(result: { code: number; stdout: string; stderr: string }, line: string): void {
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
    code: 3,
    stdout: "",
    stderr: `agent: run ended with error_model: ${line}\n`,
  });
}

describe("endpoint errors by what the body says: one line, exit 3", () => {
  test("404 model_not_found: unknown model", async () => {
    const server = startServer([
      { status: 404, body: { error: { message: "The model `gpt-9` does not exist", type: "invalid_request_error", code: "model_not_found" } } },
    ]);
    const result = await runAgainst(server.url, ["--quiet", "--model", "gpt-9"]);
    expectEndedWith(result, `unknown model gpt-9 at ${server.url} (HTTP 404: The model \`gpt-9\` does not exist): check --model / AGENT_MODEL`);
    server.assertDone();
  });

  test("another 404: the URL it was for, and --base-url", async () => {
    const server = startServer([{ status: 404, body: { error: { message: "No fixture matched" } } }]);
    const result = await runAgainst(server.url);
    expectEndedWith(result, `endpoint answered 404 for ${server.url}/chat/completions (No fixture matched): check --base-url (it usually ends in /v1)`);
    server.assertDone();
  });

  test("429 insufficient_quota: no retry, quota exceeded for this key", async () => {
    const message = "You exceeded your current quota, please check your plan and billing details.";
    const server = startServer([{ status: 429, body: { error: { message, type: "insufficient_quota", code: "insufficient_quota" } } }]);
    const result = await runAgainst(server.url);
    expectEndedWith(result, `quota exceeded for this key at ${server.url} (HTTP 429: ${message}): check the plan and billing of OPENAI_API_KEY`);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  test("429 rate limit: retried as Retry-After says, each retry on stderr, then one line", async () => {
    const limited: ScriptedReply = { status: 429, headers: { "retry-after": "0" }, body: { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } } };
    const server = startServer([limited, limited, limited, limited, limited]);
    const result = await runAgainst(server.url, []);
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines.slice(0, -1)).toEqual([1, 2, 3, 4].map((n) => `[lead] model request failed (HTTP 429: Rate limit reached); retry ${n} in 0.0 s`));
    expect(lines.at(-1)).toBe(
      `agent: run ended with error_model: the model endpoint ${server.url} kept rate limiting the requests after 5 attempts (last: HTTP 429: Rate limit reached): wait a minute and run again`,
    );
    expect(result.code).toBe(3);
    server.assertDone();
  });

  test.each<[SocketBehaviour, string]>([
    ["reset", "connection reset"],
    ["plain-http", "TLS handshake failed (EPROTO)"],
    ["sse-reset", "connection reset"],
  ])("a server that does %s: retried, then the host named", async (behaviour, detail) => {
    await using server = await startSocketServer(behaviour);
    const result = await runAgainst(server.url);
    expectEndedWith(
      result,
      `cannot reach the model endpoint at ${new URL(server.url).host} after 5 attempts (last: ${detail}): check --base-url and that the endpoint is up`,
    );
    // The run opens its connection ahead (src/model/preconnect.ts) and the first attempt goes
    // over it; a TLS handshake with a plain-http server fails there, so each attempt opens its own.
    expect(server.connections).toBe(behaviour === "plain-http" ? 6 : 5);
  }, 60_000);

  test("a stream cut before finish_reason, every time", async () => {
    const cut: ScriptedReply = { text: "a cut answer", cut: { afterChunks: 2 } };
    const server = startServer([cut, cut, cut, cut, cut]);
    const result = await runAgainst(server.url);
    expectEndedWith(
      result,
      `the model endpoint at ${new URL(server.url).host} cut the answer off after 5 attempts (last: the answer stream was cut before it finished): check --base-url and that the endpoint is up`,
    );
    server.assertDone();
  }, 60_000);

  test("a 200 that is not a completion: retried once, then its first 200 bytes", async () => {
    const page: ScriptedReply = { raw: { contentType: "text/html", body: "<html>\n  <body>Welcome to nginx!</body>\n</html>\n" } };
    const server = startServer([page, page]);
    const result = await runAgainst(server.url);
    expectEndedWith(
      result,
      `the endpoint ${server.url} returned an invalid response (first 200 bytes: <html> <body>Welcome to nginx!</body> </html>): check --base-url (it usually ends in /v1)`,
    );
    server.assertDone();
  });

  test("an empty completion twice: a warning, error_model, never an empty success", async () => {
    const server = startServer([{ text: "" }, { text: "" }]);
    const { run } = runSetup();
    const result = await run(["hello", "--base-url", server.url, "--model", "test-model", "--output", "stream-json"]);
    const message = "the model test-model answered with no text and no tool calls (2 times): ask again, or try another model";
    expect(result.code).toBe(3);
    const stderr = result.stderr.trimEnd().split("\n");
    expect(stderr[0]).toMatch(/^\[lead\] model request failed \(an empty answer: no text, no tool calls\); retry 1 in \d+\.\d s$/);
    expect(stderr.slice(1)).toEqual([`[lead] warning: ${message}`, `agent: run ended with error_model: ${message}`]);
    const lines = parseStream(result.stdout);
    expect(lines).toContainEqual({ type: "warning", agent: "lead", message });
    expect(lines.at(-1)).toMatchObject({ subtype: "error_model", is_error: true, result: message });
    server.assertDone();
  });
});
