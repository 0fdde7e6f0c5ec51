import { describe, expect, test } from "bun:test";
import { ModelRefusalError } from "../../src/core/errors.ts";
import { THINKING_EXTRA, toAnthropicRequest } from "../../src/model/anthropic/anthropic-request.ts";
import { requestBreach } from "../../src/model/anthropic/request-rules.ts";
import { AnthropicStreamAssembler } from "../../src/model/anthropic/anthropic-stream.ts";
import { StreamCutError, StreamErrorEventError } from "../../src/model/stream-assembler.ts";
import type { AnswerPiece, ChatMessage } from "../../src/model/types.ts";

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
    const request = toAnthropicRequest({ model: "m", messages: history, tools: [], maxTokens: 8192, thinking: true });
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
      thinking: true,
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
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 9, cachedInputTokens: 7, cacheWriteInputTokens: 2 });
  });

  test("thinking and each tool call's input are told as they stream, the call named by its first (empty) piece", () => {
    const pieces: AnswerPiece[] = [];
    const assembler = new AnthropicStreamAssembler(undefined, "", (piece) => pieces.push(piece));
    push(assembler, { type: "message_start", message: { usage: { input_tokens: 3 } } });
    push(assembler, { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } });
    push(assembler, { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Look first." } });
    push(assembler, { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } });
    push(assembler, { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "t1", name: "glob", input: {} } });
    push(assembler, { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"pattern":' } });
    push(assembler, { type: "content_block_start", index: 3, content_block: { type: "tool_use", id: "t2", name: "read_file", input: {} } });
    push(assembler, { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"*"}' } });
    expect(pieces).toEqual([
      { kind: "thinking", text: "Look first." },
      { kind: "tool_input", index: 0, id: "t1", name: "glob", json: "" },
      { kind: "tool_input", index: 0, id: "t1", name: "glob", json: '{"pattern":' },
      { kind: "tool_input", index: 1, id: "t2", name: "read_file", json: "" },
      { kind: "tool_input", index: 0, id: "t1", name: "glob", json: '"*"}' },
    ]);
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

describe("requests the API takes: every one built here passes the API's rules (request-rules.ts)", () => {
  const read = (id: string) => ({ id, name: "read_file", arguments: `{"path":"${id}.txt"}` });
  const loop = (steps: number): ChatMessage[] => {
    const messages: ChatMessage[] = [{ role: "system", content: "s" }, { role: "user", content: "read them" }];
    for (let step = 1; step <= steps; step++) {
      // Claude thinks once, at the start of the turn; the answers after a tool result come without.
      const extra = step === 1 ? { extra: { [THINKING_EXTRA]: [signed] } } : {};
      messages.push({ role: "assistant", content: step === 1 ? "\n\n" : null, toolCalls: [read(`t${step}`)], ...extra }, { role: "tool", toolCallId: `t${step}`, content: "hi" });
    }
    return messages;
  };

  test("a tool loop of 1 to 5 steps on a thinking model keeps thinking on for the whole turn; a blank text block is left out", () => {
    for (let steps = 1; steps <= 5; steps++) {
      const request = toAnthropicRequest({ model: "m", messages: loop(steps), tools: [], maxTokens: 32_000, thinking: true });
      expect(requestBreach(request)).toBeUndefined();
      expect(request.thinking).toEqual({ type: "enabled", budget_tokens: 16_000 });
      expect(request.messages[1]!.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    }
  });

  test("a model that takes adaptive thinking only gets {type: adaptive} in every request of the loop, its answers thinking or not", () => {
    for (let steps = 0; steps <= 4; steps++) {
      const request = toAnthropicRequest({ model: "m", messages: loop(steps), tools: [], maxTokens: 32_000, thinking: true, adaptive: true });
      expect(request.thinking).toEqual({ type: "adaptive" });
      expect(requestBreach(request)).toBeUndefined();
    }
    const unthought: ChatMessage[] = [{ role: "user", content: "q" }, { role: "assistant", content: null, toolCalls: [read("t1")] }, { role: "tool", toolCallId: "t1", content: "r" }];
    expect(toAnthropicRequest({ model: "m", messages: unthought, tools: [], maxTokens: 1024, thinking: true, adaptive: true }).thinking).toEqual({ type: "adaptive" });
  });

  test("without thinking (no room under the cap, or a model that does not think), the turn's answers go without their thinking blocks", () => {
    for (const options of [{ maxTokens: 1024, thinking: true }, { maxTokens: 32_000, thinking: false }]) {
      const request = toAnthropicRequest({ model: "m", messages: loop(3), tools: [], ...options });
      expect(request.thinking).toBeUndefined();
      expect(requestBreach(request)).toBeUndefined();
      expect(request.messages[1]!.content.map((block) => block.type)).toEqual(["tool_use"]);
    }
    // A new turn after it: earlier turns keep theirs (the cached prefix stays as it was).
    const next = toAnthropicRequest({ model: "m", messages: [...loop(2), { role: "assistant", content: "done" }, { role: "user", content: "again" }], tools: [], maxTokens: 32_000, thinking: false });
    expect(requestBreach(next)).toBeUndefined();
    expect(next.messages[1]!.content[0]).toEqual(signed);
  });

  test("a blank user message or tool result is no blank text block", () => {
    const request = toAnthropicRequest({
      model: "m",
      messages: [{ role: "user", content: " \n" }, { role: "assistant", content: null, toolCalls: [read("t1")] }, { role: "tool", toolCallId: "t1", content: "\n" }],
      tools: [],
      maxTokens: 8192,
      thinking: false,
    });
    expect(requestBreach(request)).toBeUndefined();
  });

  test("an interleaved-thinking answer is sent back in the order it streamed; a refusal is an error, empty or not, never an answer", () => {
    const assembler = new AnthropicStreamAssembler();
    const push = (event: Record<string, unknown>) => assembler.push(JSON.stringify(event), String(event.type));
    const second = { type: "thinking", thinking: "then b", signature: "sig-2" };
    const blocks: Array<Record<string, unknown>> = [signed, { type: "text", text: "Reading." }, { type: "tool_use", id: "t1", name: "read_file", input: { path: "a" } }, second, { type: "tool_use", id: "t2", name: "read_file", input: { path: "b" } }];
    push({ type: "message_start", message: { usage: { input_tokens: 3 } } });
    blocks.forEach((block, index) => {
      push({ type: "content_block_start", index, content_block: block.type === "tool_use" ? { ...block, input: {} } : block });
      if (block.type === "tool_use") push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
    });
    push({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } });
    push({ type: "message_stop" });
    const answer = assembler.finish().message;
    const messages: ChatMessage[] = [
      { role: "user", content: "read a and b" },
      answer,
      { role: "tool", toolCallId: "t1", content: "A" },
      { role: "tool", toolCallId: "t2", content: "B" },
    ];
    const request = toAnthropicRequest({ model: "m", messages, tools: [], maxTokens: 32_000, thinking: true });
    expect(request.messages[1]!.content).toEqual(blocks);
    const issued = new Set([signed, second].map((block) => JSON.stringify(block)));
    const context = { issued: (block: Record<string, unknown>) => issued.has(JSON.stringify(block)), answerOf: () => blocks };
    expect(requestBreach(request, context)).toBeUndefined();

    for (const text of ["Hi", ""]) {
      const refused = new AnthropicStreamAssembler(undefined, "claude-x");
      refused.push(JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 3 } } }), "message_start");
      if (text) refused.push(JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text } }), "content_block_start");
      refused.push(JSON.stringify({ type: "message_delta", delta: { stop_reason: "refusal" } }), "message_delta");
      refused.push(JSON.stringify({ type: "message_stop" }), "message_stop");
      expect(() => refused.finish()).toThrow(ModelRefusalError);
    }
  });
});
