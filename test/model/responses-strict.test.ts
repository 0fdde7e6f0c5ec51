import { afterEach, describe, expect, test } from "bun:test";
import { RESPONSES_REQUEST_RULES } from "../../src/model/responses/request-rules.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { responsesStream } from "../support/responses-stream.ts";

// The strict mock (test/support/responses-strict.ts) refuses each input shape
// the Responses API refuses, over HTTP, with the API's 400 body and words.

type Item = Record<string, unknown>;

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const REASONING = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAB-encrypted-1" };
const CALL = { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' };
const OUTPUT = { type: "function_call_output", call_id: "call_1", output: "hi" };
const USER = { role: "user", content: "read a.txt" };

/** The strict server after it answered with a reasoning item and a call. */
async function afterCallAnswer(): Promise<void> {
  server = ScriptedModelServer.start([
    responsesStream([
      { type: "response.output_item.done", output_index: 0, item: REASONING },
      { type: "response.output_item.done", output_index: 1, item: { ...CALL, id: "fc_1" } },
      { type: "response.completed", response: { id: "resp_1", status: "completed", output: [REASONING, { ...CALL, id: "fc_1" }], usage: { input_tokens: 5, output_tokens: 5 } } },
    ]),
  ]);
  await (await post([USER])).json;
}

async function post(input: Item[]): Promise<{ status: number; json: Item }> {
  const response = await fetch(`${server!.url}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-5", input, store: false, stream: true }) });
  const text = await response.text();
  return { status: response.status, json: response.status === 400 ? (JSON.parse(text) as Item) : {} };
}

async function expectRefused(input: Item[], message: string): Promise<void> {
  const { status, json } = await post(input);
  expect(status).toBe(400);
  expect(json).toEqual({ error: { message, type: "invalid_request_error", param: "input", code: null } });
}

describe("the strict Responses mock refuses what the API refuses", () => {
  test("a call without its output; an output without its call", async () => {
    server = ScriptedModelServer.start();
    await expectRefused([USER, CALL], "No tool output found for function call call_1.");
    await expectRefused([USER, OUTPUT], "No tool call found for function call output with call_id call_1.");
  });

  test("a reasoning item followed by no item of the model's", async () => {
    server = ScriptedModelServer.start();
    await expectRefused([USER, REASONING, USER], "Item 'rs_1' of type 'reasoning' was provided without its required following item.");
  });

  test("a reasoning item whose encrypted content is not the one given", async () => {
    await afterCallAnswer();
    await expectRefused([USER, { ...REASONING, encrypted_content: "gAAAAB-forged" }, CALL, OUTPUT], "The encrypted content for item rs_1 could not be verified.");
  });

  test("a call sent back without the reasoning item that came before it", async () => {
    await afterCallAnswer();
    await expectRefused([USER, CALL, OUTPUT], "Item 'call_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.");
  });

  test("the round trip the API takes passes", async () => {
    await afterCallAnswer();
    server!.push(responsesStream([{ type: "response.completed", response: { id: "resp_2", status: "completed", output: [], usage: { input_tokens: 5, output_tokens: 5 } } }]));
    expect((await post([USER, REASONING, CALL, OUTPUT])).status).toBe(200);
    server!.assertDone();
  });

  test("every rule has a test above", () => {
    expect(RESPONSES_REQUEST_RULES.map((rule) => rule.name)).toEqual(["call-has-output", "output-has-call", "reasoning-followed", "reasoning-unchanged", "call-after-its-reasoning"]);
  });
});
