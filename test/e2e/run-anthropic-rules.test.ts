import { expect, test } from "bun:test";
import { join } from "node:path";
import { anthropicAnswer as answer, anthropicStream as messagesStream } from "../support/anthropic-stream.ts";
import { ResultLine, runSetup, scriptedServers } from "./run-fixture.ts";

// --provider anthropic on the compiled binary against the strict Messages mock
// (test/support/anthropic-strict.ts): each request the run makes is judged by
// the API's own rules, so a shape api.anthropic.com answers with a 400 fails
// here too. Tool loops of several steps on a thinking model, an answer with
// interleaved thinking, a refusal and an overloaded stream.

const serve = scriptedServers();
const ENV = { ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: undefined };
const USAGE = { input_tokens: 20, output_tokens: 10 };
const args = (server: { url: string }) => ["--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5", "--output", "json", "--quiet"];

const read = (id: string, path: string) => ({ type: "tool_use", id, name: "read_file", input: { path } });
const thought = (n: number, text: string) => ({ type: "thinking", thinking: text, signature: `EqQBCkYIBRgCsig-${n}` });

async function workspaceWith(files: string[]) {
  const setup = runSetup();
  for (const file of files) await Bun.write(join(setup.workspace, file), `${file} says hi\n`);
  return setup;
}

test("a tool loop of three steps on a thinking model: thinking stays on for the whole assistant turn; a blank text block is not sent back", async () => {
  const server = serve([
    // Claude writes its thinking once, at the start of the turn, and none after a tool result.
    answer([thought(1, "Three files to read."), { type: "text", text: "\n\n" }, read("toolu_01", "a.txt")], "tool_use", USAGE),
    answer([read("toolu_02", "b.txt")], "tool_use", USAGE),
    answer([read("toolu_03", "c.txt")], "tool_use", USAGE),
    answer([{ type: "text", text: "All three say hi." }], "end_turn", USAGE),
  ]);
  const { run } = await workspaceWith(["a.txt", "b.txt", "c.txt"]);
  const result = await run(["read a.txt, b.txt and c.txt", ...args(server)], { env: ENV });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(ResultLine.parse(JSON.parse(result.stdout)).result).toBe("All three say hi.");
  expect(server.requests.map((request) => (request.body.thinking as { type?: string } | undefined)?.type)).toEqual(["enabled", "enabled", "enabled", "enabled"]);
  const last = server.requests[3]!.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
  expect(last[1]!.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
}, 60_000);

test("an answer with interleaved thinking is sent back in the order it came: thinking, tool, thinking, tool", async () => {
  const blocks = [thought(1, "First a.txt."), read("toolu_01", "a.txt"), thought(2, "Then b.txt."), read("toolu_02", "b.txt")];
  const server = serve([answer(blocks, "tool_use", USAGE), answer([{ type: "text", text: "Both say hi." }], "end_turn", USAGE)]);
  const { run } = await workspaceWith(["a.txt", "b.txt"]);
  const result = await run(["read a.txt and b.txt", ...args(server)], { env: ENV });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  const sent = server.requests[1]!.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
  expect(sent[1]!.content).toEqual(blocks);
}, 60_000);

const refusal = (text: string) =>
  messagesStream([
    { type: "message_start", message: { id: "msg_r", type: "message", role: "assistant", content: [], usage: { input_tokens: 9, output_tokens: 1 } } },
    ...(text === ""
      ? []
      : [
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
          { type: "content_block_stop", index: 0 },
        ]),
    {
      type: "message_delta",
      delta: { stop_reason: "refusal", stop_sequence: null, stop_details: { type: "refusal", category: "cyber", explanation: "This request was declined because it could enable cyber harm." } },
      usage: { output_tokens: 3 },
    },
    { type: "message_stop" },
  ]);

test("a refusal ends the run with error_refusal, its text and explanation, exit 3; an empty one is asked once", async () => {
  const server = serve([refusal("Hi"), refusal("")]);
  const { run } = runSetup();
  const partial = await run(["hello", ...args(server)], { env: ENV });
  expect(partial.code).toBe(3);
  const line = ResultLine.parse(JSON.parse(partial.stdout));
  expect(line).toMatchObject({ subtype: "error_refusal", is_error: true });
  expect(line.result).toBe(
    'the model claude-sonnet-4-5 refused to answer (cyber: This request was declined because it could enable cyber harm.) after writing "Hi": rephrase the request, or start a new session without it',
  );
  const empty = await run(["hello", ...args(server)], { env: ENV });
  expect(empty.code).toBe(3);
  expect(ResultLine.parse(JSON.parse(empty.stdout)).result).toBe(
    "the model claude-sonnet-4-5 refused to answer (cyber: This request was declined because it could enable cyber harm.): rephrase the request, or start a new session without it",
  );
  server.assertDone();
}, 60_000);

const OVERLOADED = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
const overloadedStream = (text?: string) =>
  messagesStream([
    { type: "message_start", message: { usage: { input_tokens: 5 } } },
    ...(text === undefined
      ? []
      : [
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
        ]),
    OVERLOADED,
  ]);

test("overloaded_error inside a 200 stream before any text is retried, backed off and counted; twice ends with a clear error", async () => {
  const server = serve([overloadedStream(), answer([{ type: "text", text: "Hello." }], "end_turn", USAGE), overloadedStream(), overloadedStream()]);
  const { run } = runSetup();
  const once = await run(["hello", ...args(server).filter((arg) => arg !== "--quiet")], { env: ENV });
  expect(once.code).toBe(0);
  expect(once.stderr).toContain("model request failed (stream error: Overloaded); retry 1 in");
  expect(ResultLine.parse(JSON.parse(once.stdout))).toMatchObject({ result: "Hello.", model_retries: 1 });
  const twice = await run(["hello", ...args(server)], { env: ENV });
  expect(twice.code).toBe(3);
  expect(twice.stderr).toBe(
    `agent: run ended with error_model: the model endpoint ${server.url} was overloaded inside its answer stream after 2 attempts (last: stream error: Overloaded): run again later\n`,
  );
  expect(ResultLine.parse(JSON.parse(twice.stdout)).model_retries).toBe(1);
  server.assertDone();
}, 60_000);

test("overloaded_error after text was shown is not retried: the run ends with an error saying so", async () => {
  const server = serve([overloadedStream("Hel")]);
  const { run } = runSetup();
  const result = await run(["hello", ...args(server)], { env: ENV });
  server.assertDone();
  expect(result.code).toBe(3);
  expect(result.stderr).toBe(
    `agent: run ended with error_model: the model endpoint ${server.url} reported an error inside its answer stream (stream error: Overloaded): not retried, as part of the answer was already shown; run again\n`,
  );
}, 60_000);

test("a model that takes adaptive thinking only (claude-sonnet-5): thinking {type: adaptive} in each request of a 3-step loop, the catalogue's answer cap", async () => {
  const server = serve([
    answer([read("toolu_01", "a.txt")], "tool_use", USAGE),
    answer([read("toolu_02", "b.txt")], "tool_use", USAGE),
    answer([read("toolu_03", "c.txt")], "tool_use", USAGE),
    answer([{ type: "text", text: "Read." }], "end_turn", USAGE),
  ]);
  const { run } = await workspaceWith(["a.txt", "b.txt", "c.txt"]);
  const result = await run(["read a.txt, b.txt and c.txt", ...args(server).map((arg) => (arg === "claude-sonnet-4-5" ? "claude-sonnet-5" : arg))], { env: ENV });
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  for (const request of server.requests) expect({ thinking: request.body.thinking, max_tokens: request.body.max_tokens }).toEqual({ thinking: { type: "adaptive" }, max_tokens: 32_000 });
}, 60_000);
