import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ContextOverflowError, ModelRequestError, ModelUnavailableError, UnknownModelError } from "../../src/core/errors.ts";
import { PROFILES } from "../../src/model/profiles/profiles.ts";
import { detectProfile } from "../../src/model/profiles/detect.ts";
import { ChatMessage, type ModelResponse } from "../../src/model/types.ts";
import { type RecordedRequest, ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { ask, clientFor } from "./helpers.ts";

// Recorded-shape streams and error bodies of each provider (test/fixtures/providers/,
// written from the providers' public documentation and reported wire data), served
// byte for byte over HTTP to the real client with the provider's profile.

const FIXTURES = join(import.meta.dir, "..", "fixtures", "providers");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const sse = (name: string, extra: Partial<ScriptedReply> = {}): ScriptedReply => ({ raw: { contentType: "text/event-stream", body: fixture(name) }, ...extra });
const errorBody = (status: number, name: string, extra: Partial<ScriptedReply> = {}): ScriptedReply => ({
  status,
  raw: { contentType: "application/json", body: fixture(name) },
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (error: Error) => error,
  );
}

/** The history after `response`'s tool calls were answered: what the next request of a tool loop sends. */
function afterTools(response: ModelResponse) {
  const request = ask("read the notes");
  // Through the history's schema, as a history file on disk would be read back.
  const kept = ChatMessage.parse(JSON.parse(JSON.stringify(response.message)));
  const results = (response.message.toolCalls ?? []).map((call) => ({ role: "tool" as const, toolCallId: call.id, content: `contents of ${call.id}` }));
  return { ...request, messages: [...request.messages, kept, ...results] };
}

const assistantOf = (request: RecordedRequest) => request.body.messages.find((message) => message.role === "assistant")!;

describe("profiles are chosen by the base URL's host", () => {
  test.each([
    ["https://api.deepseek.com", "deepseek"],
    ["https://generativelanguage.googleapis.com/v1beta/openai/", "gemini"],
    ["https://api.mistral.ai/v1", "mistral"],
    ["https://api.groq.com/openai/v1", "groq"],
    ["https://openrouter.ai/api/v1", "openrouter"],
    ["http://localhost:11434/v1", "ollama"],
    ["https://my-team.openai.azure.com/openai/v1", "azure"],
    ["https://api.x.ai/v1", "xai"],
    ["https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen"],
    ["https://api.openai.com/v1", "openai"],
    ["http://127.0.0.1:8080/v1", "generic"],
  ])("%s → %s", (url, name) => {
    expect(detectProfile(url).name).toBe(name as never);
  });
});

describe("DeepSeek: reasoning_content round trip", () => {
  test("the thinking streamed before a tool call is kept and sent back on that call's message", async () => {
    const expectEchoed = (request: RecordedRequest) => {
      expect(assistantOf(request).reasoning_content).toBe("The user wants the notes. I should read notes.txt first.");
    };
    await using server = ScriptedModelServer.start([sse("deepseek-thinking-tool-call.sse"), { text: "The notes say hi.", check: expectEchoed }]);
    const { client } = clientFor(server.url, { model: "deepseek-reasoner", profile: PROFILES.deepseek });
    const first = await client.complete(ask("read the notes"));
    expect(first.message.toolCalls).toEqual([
      { id: "call_00_u7XkQ2PqRj0a", name: "read_file", arguments: '{"path": "notes.txt"}' },
    ]);
    expect(first.usage).toEqual({ inputTokens: 212, outputTokens: 41, cachedInputTokens: 192 });
    expect((await client.complete(afterTools(first))).message.content).toBe("The notes say hi.");
    server.assertDone();
  });

  test("a profile that does not echo it (Mistral rejects unknown fields) keeps it out of the request", async () => {
    const notSent = (request: RecordedRequest) => expect(assistantOf(request)).not.toHaveProperty("reasoning_content");
    await using server = ScriptedModelServer.start([sse("deepseek-thinking-tool-call.sse"), { text: "ok", check: notSent }]);
    const { client } = clientFor(server.url, { profile: PROFILES.mistral });
    await client.complete(afterTools(await client.complete(ask("read the notes"))));
    server.assertDone();
  });

  test("without it DeepSeek answers 400: its own message is in the line", async () => {
    await using server = ScriptedModelServer.start([errorBody(400, "deepseek-missing-reasoning.json")]);
    const { client } = clientFor(server.url, { profile: PROFILES.deepseek });
    const error = await failure(client.complete(ask("hi")));
    expect(error.message).toBe(
      `the model endpoint ${server.url} rejected the request (HTTP 400: The \`reasoning_content\` in the thinking mode must be passed back to the API.)`,
    );
  });
});

describe("Gemini: parallel calls without index, thought signatures, array errors", () => {
  test("two calls streamed whole with no index and an empty id are two calls, each with valid JSON", async () => {
    const echoed = (request: RecordedRequest) => {
      const calls = assistantOf(request).tool_calls as Array<Record<string, unknown>>;
      expect(calls).toHaveLength(2);
      expect(calls[0]!.extra_content).toEqual({ google: { thought_signature: "CiQBcsjafHQ3tZ1mXkRr0w8Vq2yT5uLk9aP3bN6cE7dF1gH2iJ4=" } });
      expect(calls[1]).not.toHaveProperty("extra_content");
    };
    await using server = ScriptedModelServer.start([sse("gemini-parallel-calls.sse"), { text: "Both read.", check: echoed }]);
    const { client } = clientFor(server.url, { model: "gemini-2.5-flash", profile: PROFILES.gemini });
    const first = await client.complete(ask("read a and b"));
    const calls = first.message.toolCalls ?? [];
    expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ["read_file", { path: "a.txt" }],
      ["read_file", { path: "b.txt" }],
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    expect(first.usage).toEqual({ inputTokens: 180, outputTokens: 38 });
    await client.complete(afterTools(first));
    server.assertDone();
  });

  test("an array error body: the provider's own message, not a bare status", async () => {
    await using server = ScriptedModelServer.start([errorBody(400, "gemini-missing-signature.json")]);
    const { client } = clientFor(server.url, { profile: PROFILES.gemini });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error.message).toStartWith(`the model endpoint ${server.url} rejected the request (HTTP 400: Function call is missing a thought_signature`);
  });

  test("a bad key arrives as HTTP 400 with API_KEY_INVALID: an authentication failure", async () => {
    await using server = ScriptedModelServer.start([errorBody(400, "gemini-bad-key.json")]);
    const { client, sleeps } = clientFor(server.url, { profile: PROFILES.gemini });
    const error = await failure(client.complete(ask("hi")));
    expect(error.message).toBe(`authentication failed at ${server.url} (HTTP 400: API key not valid. Please pass a valid API key.): check OPENAI_API_KEY`);
    expect(sleeps).toEqual([]);
  });

  test("a bad key whose body nests Google's error as a JSON string (as a gateway passes it on): classed by the inner error, an authentication failure", async () => {
    await using server = ScriptedModelServer.start([errorBody(400, "gemini-bad-key-nested.json")]);
    const { client, sleeps } = clientFor(server.url, { profile: PROFILES.gemini });
    const error = await failure(client.complete(ask("hi")));
    expect(error.message).toBe(`authentication failed at ${server.url} (HTTP 400: API key not valid. Please pass a valid API key.): check OPENAI_API_KEY`);
    expect(sleeps).toEqual([]);
  });

  test("a 429 RESOURCE_EXHAUSTED waits as its RetryInfo says, then succeeds", async () => {
    await using server = ScriptedModelServer.start([errorBody(429, "gemini-rate-limit.json"), { text: "ok" }]);
    const { client, sleeps } = clientFor(server.url, { profile: PROFILES.gemini });
    expect((await client.complete(ask("hi"))).message.content).toBe("ok");
    expect(sleeps).toEqual([7000]);
    server.assertDone();
  });
});

describe("OpenRouter: reasoning_details round trip", () => {
  test("the pieces of one reasoning block are joined into one, and sent back on the tool-call message", async () => {
    const echoed = (request: RecordedRequest) => {
      const assistant = assistantOf(request);
      expect(assistant.reasoning_details).toEqual([
        { type: "reasoning.text", text: "I need the notes file.", signature: "EqMBCkYIBhgCKkDq3fZ0Lk9Qm2nR", format: "anthropic-claude-v1", index: 0 },
      ]);
      expect(assistant).not.toHaveProperty("reasoning");
    };
    await using server = ScriptedModelServer.start([sse("openrouter-reasoning-tool-call.sse"), { text: "done", check: echoed }]);
    const { client } = clientFor(server.url, { model: "anthropic/claude-sonnet-4", profile: PROFILES.openrouter });
    const first = await client.complete(ask("read the notes"));
    expect(first.message.toolCalls?.map((call) => call.id)).toEqual(["toolu_01Xq7nR2mK8pLs3vT4wY5zAb"]);
    expect(first.message.extra?.reasoning).toBe("I need the notes file.");
    await client.complete(afterTools(first));
    server.assertDone();
  });
});

describe("Mistral and vLLM: flat error bodies", () => {
  test("a 422 naming stream_options: asked again at once without it, still streaming, and never again", async () => {
    const withOptions = (request: RecordedRequest) => expect(request.body.stream_options).toEqual({ include_usage: true });
    const without = (request: RecordedRequest) => {
      expect(request.body.stream).toBe(true);
      expect(request.body).not.toHaveProperty("stream_options");
    };
    await using server = ScriptedModelServer.start([
      errorBody(422, "mistral-stream-options-422.json", { check: withOptions }),
      sse("mistral-stream.sse", { check: without }),
      sse("mistral-stream.sse", { check: without }),
    ]);
    const { client, sleeps } = clientFor(server.url, { profile: PROFILES.generic });
    const answer = await client.complete(ask("hi"));
    expect(answer.message.content).toBe("Bonjour !");
    expect(answer.usage).toEqual({ inputTokens: 14, outputTokens: 4 });
    await client.complete(ask("again"));
    expect(sleeps).toEqual([]);
    server.assertDone();
  });

  test("the mistral profile never sends stream_options", async () => {
    const without = (request: RecordedRequest) => expect(request.body).not.toHaveProperty("stream_options");
    await using server = ScriptedModelServer.start([sse("mistral-stream.sse", { check: without })]);
    const { client } = clientFor(server.url, { profile: PROFILES.mistral });
    expect((await client.complete(ask("hi"))).message.content).toBe("Bonjour !");
    server.assertDone();
  });

  test("a reasoning model's content sent as a list of parts: the text parts are the answer, the thinking is not", async () => {
    await using server = ScriptedModelServer.start([sse("mistral-magistral-thinking.sse")]);
    const { client } = clientFor(server.url, { profile: PROFILES.mistral });
    const answer = await client.complete(ask("salut"));
    expect(answer.message.content).toBe("Bonjour !");
    expect(answer.usage).toEqual({ inputTokens: 20, outputTokens: 11 });
    server.assertDone();
  });

  test("a flat 400 of type invalid_model: an unknown model, with Mistral's message", async () => {
    await using server = ScriptedModelServer.start([errorBody(400, "mistral-invalid-model.json")]);
    const { client } = clientFor(server.url, { model: "mistral-huge-latest", profile: PROFILES.mistral });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(UnknownModelError);
    expect(error.message).toBe(`unknown model mistral-huge-latest at ${server.url} (HTTP 400: Invalid model: mistral-huge-latest): check --model / AGENT_MODEL`);
  });

  test.each(["mistral-context-too-long.json", "vllm-context-too-long.json"])("a flat context overflow (%s) is recognised", async (name) => {
    await using server = ScriptedModelServer.start([errorBody(400, name)]);
    const { client } = clientFor(server.url, { profile: PROFILES.vllm });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error.message).toContain("maximum context length");
  });

  test("FastAPI's {detail} on a 401 is the message", async () => {
    await using server = ScriptedModelServer.start([errorBody(401, "fastapi-detail.json")]);
    const { client } = clientFor(server.url, { profile: PROFILES.vllm });
    expect((await failure(client.complete(ask("hi")))).message).toBe(`authentication failed at ${server.url} (HTTP 401: Not authenticated): check OPENAI_API_KEY`);
  });
});

describe("errors inside a 200 stream: not retried, the provider's message shown", () => {
  test.each([
    ["groq-error-event.sse", "groq", "stream error tool_use_failed: Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details."],
    ["openrouter-error-chunk.sse", "openrouter", "stream error server_error: Provider disconnected unexpectedly"],
    ["llamacpp-error.sse", "llamacpp", "stream error 500: Failed to parse input at pos 11: <tool_call>"],
  ] as const)("%s", async (name, profile, said) => {
    await using server = ScriptedModelServer.start([sse(name)]);
    const { client, retries } = clientFor(server.url, { profile: PROFILES[profile] });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toBe(
      `the model endpoint ${server.url} reported an error inside its answer stream (${said}): not retried, as the answer was already under way; run again`,
    );
    expect(retries).toEqual([]);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });
});

describe("finish_reason length in the middle of a tool call", () => {
  test("asked once more with the model's whole output allowance; the whole call comes back", async () => {
    const raised = (request: RecordedRequest) => expect(request.body.max_tokens).toBe(16384);
    await using server = ScriptedModelServer.start([
      sse("length-mid-call.sse", { check: (request) => expect(request.body).not.toHaveProperty("max_tokens") }),
      { toolCalls: [{ name: "write_file", arguments: { path: "big.txt", content: "lorem ipsum dolor sit amet" } }], check: raised },
    ]);
    const { client, retries } = clientFor(server.url, { model: "gpt-4o-mini", profile: PROFILES.generic, maxOutputTokens: () => 16384 });
    const answer = await client.complete(ask("write it"));
    expect(retries.map((retry) => retry.reason)).toEqual(["the answer reached the output limit inside a tool call; asking again with a cap of 16384 tokens"]);
    expect(answer.finishReason).toBe("tool_calls");
    expect(JSON.parse(answer.message.toolCalls![0]!.arguments)).toEqual({ path: "big.txt", content: "lorem ipsum dolor sit amet" });
    expect(answer.usage).toEqual({ inputTokens: 130, outputTokens: 21 });
    server.assertDone();
  });

  test("OpenAI's profile raises max_completion_tokens (its reasoning models refuse max_tokens)", async () => {
    const raised = (request: RecordedRequest) => {
      expect(request.body.max_completion_tokens).toBe(100000);
      expect(request.body).not.toHaveProperty("max_tokens");
    };
    await using server = ScriptedModelServer.start([sse("length-mid-call.sse"), { text: "done", check: raised }]);
    const { client } = clientFor(server.url, { model: "o4-mini", profile: PROFILES.openai, maxOutputTokens: () => 100000 });
    await client.complete(ask("write it"));
    server.assertDone();
  });

  test("a model of unknown limits is not asked again: the cut answer is returned as it came", async () => {
    await using server = ScriptedModelServer.start([sse("length-mid-call.sse")]);
    const { client } = clientFor(server.url, { profile: PROFILES.generic });
    const answer = await client.complete(ask("write it"));
    expect(answer.finishReason).toBe("length");
    server.assertDone();
  });
});

describe("the history keeps what the endpoint sent beside the standard fields", () => {
  test("a message from before extras existed still loads; one with extras round-trips", () => {
    expect(ChatMessage.parse({ role: "assistant", content: null, toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }] })).toBeDefined();
    const withExtras = {
      role: "assistant" as const,
      content: null,
      extra: { reasoning_content: "thinking" },
      toolCalls: [{ id: "c1", name: "read_file", arguments: "{}", extra: { extra_content: { google: { thought_signature: "sig" } } } }],
    };
    expect(ChatMessage.parse(withExtras)).toEqual(withExtras);
  });
});
