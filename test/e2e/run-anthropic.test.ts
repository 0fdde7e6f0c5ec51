import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicAnswer as answer, anthropicStream as messagesStream } from "../support/anthropic-stream.ts";
import { ResultLine, runSetup, scriptedServers } from "./run-fixture.ts";

// --provider anthropic on the compiled binary against our scripted server, which
// records each request body whole: what aimock's journal cannot show (it keeps
// its own chat-completions translation). The answers are Anthropic Messages
// event streams written from the API's documentation.

const serve = scriptedServers();
const ENV = { ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: undefined };

const WRITE = { type: "tool_use", id: "toolu_01", name: "write_file", input: { path: "hello.txt", content: "hi\n" } };
const THOUGHT = { type: "thinking", thinking: "A file is wanted: write_file.", signature: "EqQBCkYIBRgCsig-1" };

test("the second request carries cache_control on the stable prefix, the signed thinking block and the tool result; cache reads are counted", async () => {
  const server = serve([
    answer([THOUGHT, WRITE], "tool_use", { input_tokens: 20, cache_creation_input_tokens: 1000, cache_read_input_tokens: 0, output_tokens: 30 }),
    answer([{ type: "text", text: "Wrote hello.txt." }], "end_turn", { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 1000, output_tokens: 10 }),
  ]);
  const { run, workspace } = runSetup();
  const result = await run(["create hello.txt", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits", "--output", "json", "--quiet"], {
    env: ENV,
  });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(readFileSync(join(workspace, "hello.txt"), "utf8")).toBe("hi\n");
  const final = ResultLine.parse(JSON.parse(result.stdout));
  expect(final.result).toBe("Wrote hello.txt.");
  // Anthropic's input_tokens leaves the cache out; ours counts it, the reads as cached.
  expect(final.usage).toMatchObject({ input_tokens: 2070, cached_input_tokens: 1000, output_tokens: 40, model_calls: 2 });
  // Claude Sonnet 4.5 at $3 in, $0.30 a cache read, $3.75 a cache write, $15 out: the 1000 written tokens at the write price.
  expect(final.total_cost_usd).toBeCloseTo((20 * 3 + 1000 * 3.75 + 30 * 15 + 50 * 3 + 1000 * 0.3 + 10 * 15) / 1e6, 9);

  const [first, second] = server.requests;
  expect(first!.headers).toMatchObject({ "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "x-agent-name": "lead" });
  expect(first!.headers.authorization).toBeUndefined();
  const body = second!.body as unknown as {
    system: Array<Record<string, unknown>>;
    messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
    thinking?: { type: string; budget_tokens: number };
    stream: boolean;
    max_tokens: number;
  };
  expect(body.stream).toBe(true);
  expect(body.thinking?.type).toBe("enabled");
  expect(body.thinking!.budget_tokens).toBeLessThan(body.max_tokens);
  expect(body.system).toEqual([{ type: "text", text: expect.stringMatching(/^You are the Lead/), cache_control: { type: "ephemeral" } }]);
  expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  // The end of the first request's prompt: the prefix this request reads from the cache.
  expect(body.messages[0]!.content.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("create hello.txt"), cache_control: { type: "ephemeral" } });
  // The answer as it came: the signed thinking block first, then the call.
  expect(body.messages[1]!.content).toEqual([
    { type: "thinking", thinking: THOUGHT.thinking, signature: THOUGHT.signature },
    { type: "tool_use", id: "toolu_01", name: "write_file", input: WRITE.input },
  ]);
  expect(body.messages[2]!.content.at(-1)).toMatchObject({ cache_control: { type: "ephemeral" } });
  expect(body.messages[2]!.content.find((block) => block.type === "tool_result")).toMatchObject({ tool_use_id: "toolu_01" });
}, 60_000);

test("529 overloaded is retried; an error event inside the stream after text was shown ends the run with the provider's message, not retried", async () => {
  const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
  const shown = [
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
  ];
  const server = serve([{ status: 529, body: overloaded }, messagesStream([{ type: "message_start", message: { usage: { input_tokens: 5 } } }, ...shown, overloaded])]);
  const { run } = runSetup();
  const result = await run(["hello", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5"], { env: ENV });
  server.assertDone();
  expect(result.code).toBe(3);
  expect(result.stderr).toContain("model request failed (HTTP 529: Overloaded); retry 1 in");
  expect(result.stderr).toContain(`agent: run ended with error_model: the model endpoint ${server.url} reported an error inside its answer stream (stream error: Overloaded): not retried, as part of the answer was already shown; run again`);
}, 60_000);

test("a refused key names ANTHROPIC_API_KEY; an unknown model is named as such", async () => {
  const server = serve([
    { status: 401, body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } },
    { status: 404, body: { type: "error", error: { type: "not_found_error", message: "model: claude-nope" } } },
  ]);
  const { run } = runSetup();
  const args = ["hello", "--provider", "anthropic", "--base-url", server.url, "--quiet"];
  const refused = await run([...args, "--model", "claude-sonnet-4-5"], { env: ENV });
  expect(refused.stderr).toBe(`agent: run ended with error_model: authentication failed at ${server.url} (HTTP 401: invalid x-api-key): check ANTHROPIC_API_KEY\n`);
  const unknown = await run([...args, "--model", "claude-nope"], { env: ENV });
  expect(unknown.stderr).toContain(`unknown model claude-nope at ${server.url} (HTTP 404: model: claude-nope)`);
  server.assertDone();
}, 60_000);

test("a stream cut before message_stop is retried; a whole JSON message (a proxy that ignores stream) is read as one", async () => {
  const cut = messagesStream([
    { type: "message_start", message: { usage: { input_tokens: 5 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
  ]);
  const whole = {
    raw: {
      contentType: "application/json",
      body: JSON.stringify({ id: "msg_2", type: "message", role: "assistant", content: [{ type: "text", text: "Hello." }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 2 } }),
    },
  };
  const server = serve([cut, whole]);
  const { run } = runSetup();
  const result = await run(["hello", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-haiku-4-5", "--output", "json"], { env: ENV });
  server.assertDone();
  expect(result.code).toBe(0);
  expect(result.stderr).toContain("model request failed (the answer stream was cut before it finished); retry 1 in");
  expect(ResultLine.parse(JSON.parse(result.stdout))).toMatchObject({ result: "Hello.", usage: { input_tokens: 5, output_tokens: 2, model_calls: 1 } });
}, 60_000);

test("ANTHROPIC_API_KEY is a secret: masked in what the model is sent and in the error line that quotes it", async () => {
  const key = `sk-ant-${crypto.randomUUID().replaceAll("-", "")}`;
  const server = serve([
    answer([{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "notes.txt" } }], "tool_use", { input_tokens: 5, output_tokens: 5 }),
    { status: 401, body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${key}` } } },
  ]);
  const { run, workspace } = runSetup();
  await Bun.write(join(workspace, "notes.txt"), `the key is ${key}\n`);
  const result = await run(["read notes.txt", "--provider", "anthropic", "--base-url", server.url, "--model", "claude-haiku-4-5", "--quiet"], {
    env: { ...ENV, ANTHROPIC_API_KEY: key },
  });
  server.assertDone();
  expect(result.code).toBe(3);
  const sent = JSON.stringify(server.requests[1]!.body.messages);
  expect(sent).toContain("the key is [REDACTED]");
  expect(sent).not.toContain(key);
  expect(result.stderr).toContain("invalid x-api-key [REDACTED]");
  expect(result.stderr).not.toContain(key);
}, 60_000);
