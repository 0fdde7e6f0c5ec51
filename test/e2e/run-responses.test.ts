import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { responsesStream, responsesText } from "../support/responses-stream.ts";
import { ResultLine, runSetup, scriptedServers } from "./run-fixture.ts";

// --provider openai-responses on the compiled binary against our scripted
// server, which keeps each request body whole (aimock's journal keeps its own
// translation and drops reasoning items): the stateless round trip of a
// reasoning item. The answers are Responses event streams written from the
// API's documentation.

const serve = scriptedServers();

const REASONING = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAB-encrypted-1" };
const CALL = { type: "function_call", id: "fc_1", call_id: "call_1", name: "write_file", arguments: JSON.stringify({ path: "hello.txt", content: "hi\n" }) };

const callAnswer = responsesStream([
  { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } },
  { type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1", summary: [] } },
  { type: "response.output_item.done", output_index: 0, item: { ...REASONING, status: "completed" } },
  { type: "response.output_item.added", output_index: 1, item: { ...CALL, arguments: "", status: "in_progress" } },
  { type: "response.function_call_arguments.delta", output_index: 1, item_id: "fc_1", delta: CALL.arguments.slice(0, 12) },
  { type: "response.function_call_arguments.delta", output_index: 1, item_id: "fc_1", delta: CALL.arguments.slice(12) },
  { type: "response.output_item.done", output_index: 1, item: { ...CALL, status: "completed" } },
  {
    type: "response.completed",
    response: { id: "resp_1", status: "completed", output: [REASONING, CALL], usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20 } },
  },
]);

const MESSAGE = { type: "message", id: "msg_2", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Wrote hello.txt.", annotations: [] }] };
const textAnswer = responsesStream([
  { type: "response.created", response: { id: "resp_2", status: "in_progress", output: [] } },
  { type: "response.output_item.added", output_index: 0, item: { ...MESSAGE, content: [], status: "in_progress" } },
  { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_2", delta: "Wrote " },
  { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_2", delta: "hello.txt." },
  { type: "response.output_item.done", output_index: 0, item: MESSAGE },
  {
    type: "response.completed",
    response: { id: "resp_2", status: "completed", output: [MESSAGE], usage: { input_tokens: 150, input_tokens_details: { cached_tokens: 80 }, output_tokens: 6 } },
  },
]);

test("stateless: the second request carries the whole history, the reasoning item with its encrypted content before the call, and the call's output", async () => {
  const server = serve([callAnswer, textAnswer]);
  const { run, workspace } = runSetup();
  const result = await run(
    ["create hello.txt", "--provider", "openai-responses", "--base-url", server.url, "--model", "gpt-5-mini", "--permission-mode", "acceptEdits", "--output", "json", "--quiet"],
  );
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(readFileSync(join(workspace, "hello.txt"), "utf8")).toBe("hi\n");
  const final = ResultLine.parse(JSON.parse(result.stdout));
  expect(final.result).toBe("Wrote hello.txt.");
  expect(final.usage).toMatchObject({ input_tokens: 250, cached_input_tokens: 80, output_tokens: 26, model_calls: 2 });

  const [first, second] = server.requests.map((request) => request.body as unknown as Record<string, unknown> & { input: Array<Record<string, unknown>> });
  expect(server.requests[0]!.headers.authorization).toBe("Bearer test-key");
  for (const body of [first!, second!]) {
    expect(body).toMatchObject({ model: "gpt-5-mini", store: false, stream: true, include: ["reasoning.encrypted_content"] });
    expect(body.previous_response_id).toBeUndefined();
  }
  expect((first!.tools as Array<{ type: string; name: string }>).map((tool) => tool.type)).toContain("function");
  expect(second!.input.map((item) => item.type ?? item.role)).toEqual(["developer", "user", "reasoning", "function_call", "function_call_output"]);
  expect(second!.input.slice(2)).toEqual([
    REASONING,
    { type: "function_call", call_id: "call_1", name: "write_file", arguments: CALL.arguments },
    { type: "function_call_output", call_id: "call_1", output: expect.stringContaining("hello.txt") },
  ]);
}, 60_000);

test("a model the catalogue knows does not reason is not asked for encrypted reasoning; a server_error event before any text is retried once, then ends the run with its message", async () => {
  const failing = () =>
    responsesStream([
      { type: "response.created", response: { id: "resp_3", status: "in_progress", output: [] } },
      { type: "error", code: "server_error", message: "The server had an error while processing your request.", param: null },
    ]);
  const server = serve([failing(), failing()]);
  const { run } = runSetup();
  const result = await run(["hello", "--provider", "openai-responses", "--base-url", server.url, "--model", "gpt-4o-mini", "--quiet"]);
  server.assertDone();
  expect(server.requests[0]!.body.include).toBeUndefined();
  expect(result.code).toBe(3);
  expect(result.stderr).toBe(
    `agent: run ended with error_model: the model endpoint ${server.url} kept failing inside its answer stream after 2 attempts (last: stream error server_error: The server had an error while processing your request.): run again later\n`,
  );
}, 60_000);

test("response.failed with a server_error before any text is retried, and the retry counted in the result", async () => {
  const failed = responsesStream([
    { type: "response.created", response: { id: "resp_4", status: "in_progress", output: [] } },
    { type: "response.failed", response: { id: "resp_4", status: "failed", output: [], error: { code: "server_error", message: "The model failed to generate a response." } } },
  ]);
  const server = serve([failed, responsesText("Hello.")]);
  const { run } = runSetup();
  const result = await run(["hello", "--provider", "openai-responses", "--base-url", server.url, "--model", "gpt-4o-mini", "--output", "json"]);
  server.assertDone();
  expect(result.code).toBe(0);
  expect(result.stderr).toContain("model request failed (stream error server_error: The model failed to generate a response.); retry 1 in");
  expect(ResultLine.parse(JSON.parse(result.stdout))).toMatchObject({ result: "Hello.", model_retries: 1 });
}, 60_000);

test("a tool loop of three steps on a reasoning model, through the strict mock: each step's reasoning item goes back before its call", async () => {
  const step = (n: number) => {
    const reasoning = { type: "reasoning", id: `rs_${n}`, summary: [], encrypted_content: `gAAAAB-encrypted-${n}` };
    const call = { type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, name: "read_file", arguments: JSON.stringify({ path: `${n}.txt` }) };
    return responsesStream([
      { type: "response.created", response: { id: `resp_${n}`, status: "in_progress", output: [] } },
      { type: "response.output_item.done", output_index: 0, item: reasoning },
      { type: "response.output_item.done", output_index: 1, item: call },
      { type: "response.completed", response: { id: `resp_${n}`, status: "completed", output: [reasoning, call], usage: { input_tokens: 10, output_tokens: 5 } } },
    ]);
  };
  const server = serve([step(1), step(2), step(3), responsesText("All three read.")]);
  const { run, workspace } = runSetup();
  for (const n of [1, 2, 3]) await Bun.write(join(workspace, `${n}.txt`), `file ${n}\n`);
  const result = await run(["read 1.txt, 2.txt and 3.txt", "--provider", "openai-responses", "--base-url", server.url, "--model", "gpt-5-mini", "--output", "json", "--quiet"]);
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  server.assertDone();
  expect(ResultLine.parse(JSON.parse(result.stdout)).result).toBe("All three read.");
  const last = server.requests[3]!.body as unknown as { input: Array<Record<string, unknown>> };
  expect(last.input.map((item) => item.type ?? item.role).slice(2)).toEqual(Array(3).fill(["reasoning", "function_call", "function_call_output"]).flat());
}, 60_000);
