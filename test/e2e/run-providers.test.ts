import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { ResultLine, lastToolResult, runSetup, scriptedServers } from "./run-fixture.ts";

// The providers' recorded-shape streams and error bodies (test/fixtures/providers/)
// served to the compiled binary, the profile named with --profile as a user of a
// local proxy would (auto-detection needs the provider's real host).

const startServer = scriptedServers();
const fixture = (name: string) => readFileSync(join(import.meta.dir, "..", "fixtures", "providers", name), "utf8");
const sse = (name: string, extra: Partial<ScriptedReply> = {}): ScriptedReply => ({ raw: { contentType: "text/event-stream", body: fixture(name) }, ...extra });
const assistantOf = (request: RecordedRequest) => request.body.messages.find((message) => message.role === "assistant")!;

describe("agent run with a provider's profile", () => {
  test("DeepSeek: the second request of the tool loop carries the first answer's reasoning_content", async () => {
    const echoed = (request: RecordedRequest) => {
      expect(assistantOf(request).reasoning_content).toBe("The user wants the notes. I should read notes.txt first.");
      expect(lastToolResult(request)).toContain("hello from the notes");
    };
    const server = startServer([sse("deepseek-thinking-tool-call.sse"), { text: "The notes say hello.", check: echoed }]);
    const { run, workspace } = runSetup();
    writeFileSync(join(workspace, "notes.txt"), "hello from the notes\n");
    const result = await run(["read the notes", "--base-url", server.url, "--profile", "deepseek", "--model", "deepseek-reasoner", "--output", "json", "--quiet"]);
    expect(result.stderr).toBe("");
    const line = ResultLine.parse(JSON.parse(result.stdout));
    expect(line).toMatchObject({ subtype: "success", result: "The notes say hello." });
    expect(result.code).toBe(0);
    server.assertDone();
  });

  test("Gemini: two unindexed parallel calls run as two, and the thought signature goes back on the first", async () => {
    const echoed = (request: RecordedRequest) => {
      const calls = assistantOf(request).tool_calls as Array<Record<string, unknown>>;
      expect(calls.map((call) => (call.function as { arguments: string }).arguments)).toEqual(['{"path":"a.txt"}', '{"path":"b.txt"}']);
      expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: "CiQBcsjafHQ3tZ1mXkRr0w8Vq2yT5uLk9aP3bN6cE7dF1gH2iJ4=" } });
      const results = request.body.messages.filter((message) => message.role === "tool").map((message) => String(message.content));
      expect(results).toEqual([expect.stringContaining("alpha"), expect.stringContaining("beta")]);
    };
    const server = startServer([sse("gemini-parallel-calls.sse"), { text: "alpha and beta", check: echoed }]);
    const { run, workspace } = runSetup();
    writeFileSync(join(workspace, "a.txt"), "alpha\n");
    writeFileSync(join(workspace, "b.txt"), "beta\n");
    const result = await run(["read a and b", "--base-url", server.url, "--profile", "gemini", "--model", "gemini-2.5-flash", "--quiet"]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "alpha and beta\n", stderr: "" });
    server.assertDone();
  });

  test("Gemini: a bad key (HTTP 400, an array body) is an authentication failure, exit 3", async () => {
    const server = startServer([{ status: 400, raw: { contentType: "application/json", body: fixture("gemini-bad-key.json") } }]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url, "--profile", "gemini", "--quiet"]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr: `agent: run ended with error_model: authentication failed at ${server.url} (HTTP 400: API key not valid. Please pass a valid API key.): check OPENAI_API_KEY\n`,
    });
    server.assertDone();
  });

  test("Mistral's flat 422 for stream_options: asked again without it, and the run succeeds", async () => {
    const server = startServer([
      { status: 422, raw: { contentType: "application/json", body: fixture("mistral-stream-options-422.json") } },
      sse("mistral-stream.sse", { check: (request) => expect(request.body).not.toHaveProperty("stream_options") }),
    ]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url, "--quiet"]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "Bonjour !\n", stderr: "" });
    server.assertDone();
  });

  test("an error inside a 200 stream (Groq's event: error) ends the run at once with the provider's message", async () => {
    const server = startServer([sse("groq-error-event.sse")]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url, "--profile", "groq", "--model", "llama-3.3-70b-versatile"]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr:
        `agent: run ended with error_model: the model endpoint ${server.url} reported an error inside its answer stream ` +
        `(stream error tool_use_failed: Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.): not retried, as the answer was already under way; run again\n`,
    });
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  test("length in the middle of a call: asked again with a higher max_tokens; cut again, the model is told it ran out of output", async () => {
    const raised = (request: RecordedRequest) => expect(request.body.max_tokens).toBe(16384);
    const told = (request: RecordedRequest) => {
      const result = lastToolResult(request);
      expect(result).toContain("reached its output token limit");
      expect(result).not.toContain("one JSON object");
    };
    const server = startServer([sse("length-mid-call.sse"), sse("length-mid-call.sse", { check: raised }), { text: "I will write it in parts.", check: told }]);
    const { run, workspace } = runSetup();
    const result = await run(["write big.txt", "--base-url", server.url, "--model", "gpt-4o-mini", "--permission-mode", "acceptEdits", "--quiet"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "I will write it in parts.\n" });
    expect(() => readFileSync(join(workspace, "big.txt"))).toThrow();
    server.assertDone();
  });
});

describe("cost from the shipped catalogue, with no pricing config", () => {
  test.each([
    ["gpt-4o-mini", (1000 * 0.15 + 100 * 0.6) / 1e6],
    ["claude-sonnet-4", (1000 * 3 + 100 * 15) / 1e6],
    ["deepseek-chat", (1000 * 0.14 + 100 * 0.28) / 1e6],
    ["deepseek-v4-pro", (1000 * 0.435 + 100 * 0.87) / 1e6],
  ] as const)("%s: total_cost_usd is a number", async (model, usd) => {
    const server = startServer([{ text: "hi", usage: { prompt_tokens: 1000, completion_tokens: 100 } }]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url, "--model", model, "--output", "json", "--max-budget-usd", "1"]);
    expect(result.code).toBe(0);
    const line = ResultLine.parse(JSON.parse(result.stdout));
    expect(line.total_cost_usd).toBeCloseTo(usd, 9);
    server.assertDone();
  });

  test("gpt-5.4: the answer cut inside a call is asked again with the catalogue's 128000-token output limit, and each request is priced, the one above 272K input tokens at the long-context rates", async () => {
    const raised = (request: RecordedRequest) => expect(request.body.max_completion_tokens).toBe(128000);
    const long = { prompt_tokens: 300_000, completion_tokens: 100, cached_tokens: 100_000 };
    const server = startServer([sse("length-mid-call.sse"), sse("length-mid-call.sse", { check: raised }), { text: "I will write it in parts.", usage: long }]);
    const { run } = runSetup();
    const result = await run(["write big.txt", "--base-url", server.url, "--profile", "openai", "--model", "gpt-5.4", "--permission-mode", "acceptEdits", "--output", "json"]);
    expect(result.code).toBe(0);
    const line = ResultLine.parse(JSON.parse(result.stdout));
    // The two cut answers (120 in, 16 out each) at $2.50 / $15; the last at $5 / $0.50 cached / $22.50.
    const usd = (2 * (120 * 2.5 + 16 * 15) + (200_000 * 5 + 100_000 * 0.5 + 100 * 22.5)) / 1e6;
    expect(line.total_cost_usd).toBeCloseTo(usd, 6);
    expect(result.stderr).toContain("asking again with a cap of 128000 tokens");
    server.assertDone();
  });

  test("a catalogued model with no official price found (gpt-5.4-mini): its output limit known, its cost null with the warning naming config pricing", async () => {
    const raised = (request: RecordedRequest) => expect(request.body.max_completion_tokens).toBe(128000);
    const server = startServer([sse("length-mid-call.sse"), { text: "done", check: raised }]);
    const { run } = runSetup();
    const result = await run(["write big.txt", "--base-url", server.url, "--profile", "openai", "--model", "gpt-5.4-mini", "--permission-mode", "acceptEdits", "--output", "json"]);
    const line = ResultLine.parse(JSON.parse(result.stdout));
    expect(line.total_cost_usd).toBeNull();
    expect(result.stderr).toContain('agent: warning: no known price for model "gpt-5.4-mini"');
    server.assertDone();
  });

  test("a model the catalogue does not know has no cost (null), a note and one warning naming config pricing; a budget for it names the unknown price", async () => {
    const server = startServer([{ text: "hi" }]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url, "--model", "my-local-model", "--output", "json"]);
    const line = ResultLine.parse(JSON.parse(result.stdout));
    // No figure rather than a wrong one (0 would add up as free).
    expect(line.total_cost_usd).toBeNull();
    expect(line.cost_note).toContain('no known price for model "my-local-model"');
    expect(result.stderr).toBe('agent: warning: no known price for model "my-local-model": total_cost_usd is null; add its price to config "pricing" (docs/observability.md)\n');
    expect(line.usage_by_agent.lead!.cost_usd).toBeUndefined();
    const budget = await run(["hi", "--base-url", server.url, "--model", "my-local-model", "--max-budget-usd", "1"]);
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain('model "my-local-model" has an unknown price');
    server.assertDone();
  });
});
