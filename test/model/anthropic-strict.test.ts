import { afterEach, describe, expect, test } from "bun:test";
import { ANTHROPIC_REQUEST_RULES } from "../../src/model/anthropic/request-rules.ts";
import { anthropicAnswer } from "../support/anthropic-stream.ts";
import { ScriptedModelServer } from "../support/model-server.ts";

// The strict mock (test/support/anthropic-strict.ts) refuses each request shape
// the Messages API refuses, over HTTP, with the API's 400 body and words: one
// known-bad request a rule, and the good shapes it must let through.

type Json = Record<string, unknown>;

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const THOUGHT = { type: "thinking", thinking: "Read it first.", signature: "EqQBCkYsig-1" };
const READ = { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "a.txt" } };
const USAGE = { input_tokens: 5, output_tokens: 5 };
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const result = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "hi" });
const body = (messages: Json[], extra: Json = {}) => ({ model: "claude-sonnet-4-5", max_tokens: 4096, stream: true, messages, ...extra });
const THINKING = { thinking: { type: "enabled", budget_tokens: 2048 } };

/** Posts a body to the strict server; its status and JSON. */
async function post(body: Json): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${server!.url}/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json().catch(() => ({}))) as Json };
}

/** The strict server after it answered the first request with these blocks (so it knows their signatures). */
async function afterAnswer(blocks: Json[], stop = "tool_use"): Promise<void> {
  server = ScriptedModelServer.start([anthropicAnswer(blocks, stop, USAGE)]);
  await (await fetch(`${server.url}/messages`, { method: "POST", body: JSON.stringify(body([user("go")], THINKING)) })).text();
}

async function expectRefused(request: Json, message: string): Promise<void> {
  const { status, json } = await post(request);
  expect(status).toBe(400);
  expect(json).toEqual({ type: "error", error: { type: "invalid_request_error", message }, request_id: expect.stringMatching(/^req_/) });
}

describe("the strict Messages mock refuses what the API refuses", () => {
  test("max_tokens missing", async () => {
    server = ScriptedModelServer.start();
    const { max_tokens: _, ...request } = body([user("hi")]);
    await expectRefused(request, "max_tokens: Field required");
  });

  test("an assistant message first; two user messages in a row", async () => {
    server = ScriptedModelServer.start();
    await expectRefused(body([{ role: "assistant", content: [{ type: "text", text: "hi" }] }, user("hi")]), 'messages: first message must use the "user" role');
    await expectRefused(body([user("a"), user("b")]), 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row');
  });

  test("an empty or whitespace-only text block, in a message or the system prompt", async () => {
    server = ScriptedModelServer.start();
    const blank = "messages: text content blocks must contain non-whitespace text";
    await expectRefused(body([user("go"), { role: "assistant", content: [{ type: "text", text: "\n\n" }] }, user("and?")]), blank);
    await expectRefused(body([user("")]), blank);
    await expectRefused(body([user("go")], { system: [{ type: "text", text: " " }] }), "system: text content blocks must contain non-whitespace text");
  });

  test("a tool_use with no tool_result after it; a tool_result behind text; a tool_result answering nothing", async () => {
    server = ScriptedModelServer.start();
    await expectRefused(
      body([user("go"), { role: "assistant", content: [READ] }, user("well?")]),
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    );
    await expectRefused(
      body([user("go"), { role: "assistant", content: [READ] }, { role: "user", content: [{ type: "text", text: "here:" }, result("toolu_01")] }]),
      "messages.2: Did not find 1 tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
    );
    await expectRefused(
      body([user("go"), { role: "assistant", content: [READ] }, { role: "user", content: [result("toolu_01"), result("toolu_99")] }]),
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_99. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    );
  });

  test("five cache_control breakpoints", async () => {
    server = ScriptedModelServer.start();
    const marked = (text: string) => ({ type: "text", text, cache_control: { type: "ephemeral" } });
    await expectRefused(
      body([{ role: "user", content: [marked("a"), marked("b"), marked("c"), marked("d")] }], { system: [marked("s")] }),
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
  });

  test("a thinking block the API never gave, or one changed", async () => {
    await afterAnswer([THOUGHT, READ]);
    const forged = { ...THOUGHT, thinking: "Read it first!" };
    await expectRefused(
      body([user("go"), { role: "assistant", content: [forged, READ] }, { role: "user", content: [result("toolu_01")] }], THINKING),
      "messages.1.content.0: Invalid `signature` in `thinking` block",
    );
  });

  test("an answer's thinking blocks moved: interleaved thinking rebuilt as thinking, thinking, tool, tool", async () => {
    const second = { type: "thinking", thinking: "Now the other.", signature: "EqQBCkYsig-2" };
    const other = { ...READ, id: "toolu_02", input: { path: "b.txt" } };
    await afterAnswer([THOUGHT, READ, second, other]);
    await expectRefused(
      body([user("go"), { role: "assistant", content: [THOUGHT, second, READ, other] }, { role: "user", content: [result("toolu_01"), result("toolu_02")] }], THINKING),
      "messages.1.content.1: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    );
  });

  test("thinking on, the assistant turn of a tool loop not beginning with thinking", async () => {
    server = ScriptedModelServer.start();
    await expectRefused(
      body([user("go"), { role: "assistant", content: [READ] }, { role: "user", content: [result("toolu_01")] }], THINKING),
      "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    );
  });

  test("thinking off on the third request of a loop whose turn began with thinking", async () => {
    await afterAnswer([THOUGHT, READ]);
    const again = { ...READ, id: "toolu_02" };
    await expectRefused(
      body([
        user("go"),
        { role: "assistant", content: [THOUGHT, READ] },
        { role: "user", content: [result("toolu_01")] },
        { role: "assistant", content: [again] },
        { role: "user", content: [result("toolu_02")] },
      ]),
      "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
    );
  });

  test("an assistant message ending in a thinking block", async () => {
    await afterAnswer([THOUGHT, { type: "text", text: "Done." }], "end_turn");
    await expectRefused(body([user("go"), { role: "assistant", content: [THOUGHT] }, user("and?")], THINKING), "messages.1: The final block in an assistant message cannot be `thinking`.");
  });

  test("what the API takes passes: the same loop with thinking kept on, a new turn after it with thinking off, blank text left out", async () => {
    await afterAnswer([THOUGHT, { type: "text", text: "\n\n" }, READ]);
    server!.push(anthropicAnswer([{ type: "text", text: "ok" }], "end_turn", USAGE), anthropicAnswer([{ type: "text", text: "ok" }], "end_turn", USAGE));
    const again = { ...READ, id: "toolu_02" };
    const loop = [user("go"), { role: "assistant", content: [THOUGHT, READ] }, { role: "user", content: [result("toolu_01")] }, { role: "assistant", content: [again] }, { role: "user", content: [result("toolu_02")] }];
    expect((await post(body(loop, THINKING))).status).toBe(200);
    expect((await post(body([...loop, { role: "assistant", content: [{ type: "text", text: "ok" }] }, user("next")]))).status).toBe(200);
    server!.assertDone();
  });

  test("every rule has a test above", () => {
    expect(ANTHROPIC_REQUEST_RULES.map((rule) => rule.name)).toEqual([
      "max-tokens-required",
      "first-message-user",
      "roles-alternate",
      "text-not-blank",
      "tool-use-answered",
      "tool-results-first",
      "tool-result-matches-use",
      "cache-breakpoints-at-most-4",
      "thinking-signed",
      "thinking-not-last",
      "thinking-unchanged",
      "thinking-on-begins-turn",
      "thinking-off-turn-unthought",
    ]);
  });
});
