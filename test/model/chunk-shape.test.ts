import { describe, expect, test } from "bun:test";
import { fastChunk } from "../../src/model/chunk-shape.ts";
import { WireChunk } from "../../src/model/stream-assembler.ts";
import { streamChunks } from "../support/model-server.ts";

// The hand-built read of a stream chunk must be exactly the schema's: for every
// chunk it reads, the same value WireChunk.parse returns; never a value for one
// the schema refuses (those fall back to the schema and its error message).

const completion = (message: Record<string, unknown>, finish = "stop") =>
  ({
    id: "chatcmpl-1",
    object: "chat.completion" as const,
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant" as const, content: null, ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } },
  }) as Parameters<typeof streamChunks>[0];

/** Chunks as endpoints send them: our scripted server's, and the dialects' extra fields. */
const accepted: unknown[] = [
  ...streamChunks(completion({ content: "Hello there, how are you?" }), true),
  ...streamChunks(
    completion({ tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } }, { id: "call_2", type: "function", function: { name: "glob", arguments: "{}" } }] }, "tool_calls"),
    true,
  ),
  // Usage alone, with fields the schema drops; usage null; choices null or empty.
  { id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, completion_tokens_details: { reasoning_tokens: 1 } } },
  { choices: [{ index: 0, delta: { content: "a" }, finish_reason: null, logprobs: null }], usage: null },
  { choices: null },
  {},
  // DeepSeek's reasoning_content, Groq's x_groq, OpenRouter's provider: kept on the delta, dropped elsewhere.
  { id: "x", choices: [{ index: 0, delta: { role: "assistant", content: null, reasoning_content: "thinking" } }], x_groq: { id: "req" } },
  { provider: "p", choices: [{ index: 0, delta: { content: "b", refusal: null }, native_finish_reason: "stop", finish_reason: "stop" }] },
  // Mistral's parts; a refusal; a tool call without index (Gemini's dialect) or without function.
  { choices: [{ index: 0, delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: "hm" }] }, { type: "text", text: "answer" }] } }] },
  { choices: [{ delta: { refusal: "I cannot help with that" }, finish_reason: "stop" }] },
  { choices: [{ delta: { tool_calls: [{ id: "c", type: "function", function: { name: "grep", arguments: "{", extra: 1 }, extra_content: { google: { thought_signature: "s" } } }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 0, function: null }, { index: 1 }] } }] },
  { choices: [{ delta: null, finish_reason: "length" }] },
  { choices: [{ finish_reason: null }] },
  { usage: { prompt_tokens: null, completion_tokens: null, prompt_tokens_details: null } },
];

/** Chunks the schema refuses: the fast read must not take them. */
const refused: unknown[] = [
  null,
  [],
  "text",
  { choices: {} },
  { choices: [null] },
  { choices: [{ delta: { content: 7 } }] },
  { choices: [{ delta: { content: [{ type: 3 }] } }] },
  { choices: [{ delta: { content: ["text"] } }] },
  { choices: [{ delta: { refusal: false } }] },
  { choices: [{ delta: "text" }] },
  { choices: [{ finish_reason: 1 }] },
  { choices: [{ delta: { tool_calls: {} } }] },
  { choices: [{ delta: { tool_calls: [{ index: -1 }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: 1.5 }] } }] },
  { choices: [{ delta: { tool_calls: [{ index: "0" }] } }] },
  { choices: [{ delta: { tool_calls: [{ id: 5 }] } }] },
  { choices: [{ delta: { tool_calls: [{ function: { name: 5 } }] } }] },
  { choices: [{ delta: { tool_calls: [{ function: "read_file" }] } }] },
  { choices: [{ delta: { tool_calls: [7] } }] },
  { usage: { prompt_tokens: "12" } },
  { usage: { prompt_tokens_details: { cached_tokens: "4" } } },
  { usage: [] },
];

describe("a stream chunk read without the schema", () => {
  test("every chunk of the usual shapes reads as the schema reads it", () => {
    expect(accepted.length).toBeGreaterThan(20);
    for (const chunk of accepted) {
      const fast = fastChunk(chunk);
      expect(fast).toBeDefined();
      expect(fast).toStrictEqual(WireChunk.parse(chunk));
    }
  });

  test("a chunk the schema refuses is never taken: it falls back to the schema's error", () => {
    for (const chunk of refused) {
      expect(WireChunk.safeParse(chunk).success).toBe(false);
      expect(fastChunk(chunk)).toBeUndefined();
    }
  });
});
