import { describe, expect, test } from "bun:test";
import { THINKING_EXTRA, toAnthropicRequest } from "../../src/model/anthropic/anthropic-request.ts";
import { AnthropicStreamAssembler } from "../../src/model/anthropic/anthropic-stream.ts";
import { StreamCutError, StreamErrorEventError } from "../../src/model/stream-assembler.ts";
import type { ChatMessage } from "../../src/model/types.ts";

const EPHEMERAL = { type: "ephemeral" };
const signed = { type: "thinking", thinking: "plan", signature: "sig" };

describe("our history as a Messages request", () => {
  const history: ChatMessage[] = [
    { role: "system", content: "You are the Lead." },
    { role: "user", content: "do two things" },
    { role: "assistant", content: "On it.", toolCalls: [{ id: "t1", name: "a", arguments: '{"x":1}' }, { id: "t2", name: "b", arguments: "{not json" }], extra: { [THINKING_EXTRA]: [signed] } },
    { role: "tool", toolCallId: "t1", content: "one" },
    { role: "tool", toolCallId: "t2", content: "bad arguments", isError: true },
    { role: "user", content: "reminder: todos" },
  ];

  test("tool results and the user text after them are one user turn; the answer keeps its thinking first; malformed arguments become {}", () => {
    const request = toAnthropicRequest({ model: "m", messages: history, tools: [], maxTokens: 8192, thinking: false });
    expect(request.messages.map((turn) => turn.role)).toEqual(["user", "assistant", "user"]);
    expect(request.messages[1]!.content).toEqual([
      signed,
      { type: "text", text: "On it." },
      { type: "tool_use", id: "t1", name: "a", input: { x: 1 } },
      { type: "tool_use", id: "t2", name: "b", input: {} },
    ]);
    expect(request.messages[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: "one" },
      { type: "tool_result", tool_use_id: "t2", content: "bad arguments", is_error: true },
      { type: "text", text: "reminder: todos", cache_control: EPHEMERAL },
    ]);
  });

  test("breakpoints: the system prompt, the newest turn and the turn before the last answer; never a thinking block", () => {
    const request = toAnthropicRequest({ model: "m", messages: history, tools: [], maxTokens: 8192, thinking: false });
    expect(request.system).toEqual([{ type: "text", text: "You are the Lead.", cache_control: EPHEMERAL }]);
    expect(request.messages[0]!.content).toEqual([{ type: "text", text: "do two things", cache_control: EPHEMERAL }]);
    const onlyThinking = toAnthropicRequest({
      model: "m",
      messages: [{ role: "user", content: "q" }, { role: "assistant", content: "a", extra: { [THINKING_EXTRA]: [signed] } }],
      tools: [],
      maxTokens: 8192,
      thinking: false,
    });
    expect(onlyThinking.messages[1]!.content).toEqual([signed, { type: "text", text: "a", cache_control: EPHEMERAL }]);
    const marks = JSON.stringify(request).split('"cache_control"').length - 1;
    expect(marks).toBeLessThanOrEqual(4);
  });

  test("thinking is asked for with room under the cap, and not in a tool loop whose answer did not think", () => {
    const thinking = (messages: ChatMessage[], maxTokens = 32_000) => toAnthropicRequest({ model: "m", messages, tools: [], maxTokens, thinking: true }).thinking;
    expect(thinking(history)).toEqual({ type: "enabled", budget_tokens: 16_000 });
    expect(thinking(history, 4096)).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(thinking(history, 16)).toBeUndefined();
    const unthought: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: null, toolCalls: [{ id: "t1", name: "a", arguments: "{}" }] },
      { role: "tool", toolCallId: "t1", content: "r" },
    ];
    expect(thinking(unthought)).toBeUndefined();
    expect(thinking(unthought.slice(0, 1))).toEqual({ type: "enabled", budget_tokens: 16_000 });
  });
});

describe("a Messages event stream, assembled", () => {
  const push = (assembler: AnthropicStreamAssembler, event: Record<string, unknown>) => assembler.push(JSON.stringify(event), String(event.type));

  test("redacted thinking is kept; max_tokens inside a call is `length`; usage adds the cache to the input", () => {
    const assembler = new AnthropicStreamAssembler();
    push(assembler, { type: "message_start", message: { usage: { input_tokens: 3, cache_read_input_tokens: 7, cache_creation_input_tokens: 2 } } });
    push(assembler, { type: "content_block_start", index: 0, content_block: { type: "redacted_thinking", data: "opaque" } });
    push(assembler, { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t", name: "write_file", input: {} } });
    push(assembler, { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"path":"a' } });
    push(assembler, { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 9 } });
    push(assembler, { type: "message_stop" });
    const response = assembler.finish();
    expect(response.finishReason).toBe("length");
    expect(response.message.toolCalls).toEqual([{ id: "t", name: "write_file", arguments: '{"path":"a' }]);
    expect(response.message.extra).toEqual({ [THINKING_EXTRA]: [{ type: "redacted_thinking", data: "opaque" }] });
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 9, cachedInputTokens: 7 });
  });

  test("no message_stop is a cut stream; an error event is the endpoint's error", () => {
    const cut = new AnthropicStreamAssembler();
    push(cut, { type: "message_start", message: { usage: { input_tokens: 1 } } });
    push(cut, { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hel" } });
    expect(() => cut.finish()).toThrow(StreamCutError);
    const failed = new AnthropicStreamAssembler();
    let thrown: unknown;
    try {
      push(failed, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(StreamErrorEventError);
    expect((thrown as StreamErrorEventError).error).toMatchObject({ message: "Overloaded", type: "overloaded_error" });
  });
});
