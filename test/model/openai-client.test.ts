import { describe, expect, test } from "bun:test";
import type { ChatMessage } from "../../src/model/types.ts";
import { PROFILES } from "../../src/model/profiles/profiles.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { READ_FILE, ask, clientFor } from "./helpers.ts";

describe("OpenAIModelClient", () => {
  test("a text reply comes back as an assistant message with its usage", async () => {
    await using server = ScriptedModelServer.start([
      { text: "Hello there.", usage: { prompt_tokens: 42, completion_tokens: 7 } },
    ]);
    const { client } = clientFor(server.url);
    const response = await client.complete(ask("hi"));
    expect(response).toEqual({
      message: { role: "assistant", content: "Hello there." },
      finishReason: "stop",
      usage: { inputTokens: 42, outputTokens: 7 },
    });
    const [request] = server.requests;
    expect(request!.body.model).toBe("test-model");
    expect(request!.body.messages).toEqual([
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "hi" },
    ]);
    expect(request!.headers.authorization).toBe("Bearer sk-test");
    server.assertDone();
  });

  test("the asking agent is named in the X-Agent-Name header", async () => {
    await using server = ScriptedModelServer.start([
      { identity: "alice", text: "from alice" },
      { identity: "lead", text: "from lead" },
    ]);
    const { client } = clientFor(server.url);
    expect((await client.complete(ask("go", { identity: "lead" }))).message.content).toBe("from lead");
    expect((await client.complete(ask("go", { identity: "alice" }))).message.content).toBe("from alice");
    expect(server.requests.map((r) => r.headers["x-agent-name"])).toEqual(["lead", "alice"]);
    server.assertDone();
  });

  test("configured headers replace ours whatever their case; the agent's name and the content type are ours", async () => {
    await using server = ScriptedModelServer.start([{ identity: "lead", text: "ok" }]);
    const { client } = clientFor(server.url, {
      profile: { ...PROFILES.openai, keyHeader: "api-key" },
      headers: { AUTHORIZATION: "Bearer from-config", "X-Agent-Name": "impostor", "content-type": "text/plain", "X-Extra": "1" },
    });
    await client.complete(ask("go", { identity: "lead" }));
    const { headers } = server.requests[0]!;
    expect(headers.authorization).toBe("Bearer from-config");
    expect(headers["api-key"]).toBe("sk-test");
    expect(headers["x-agent-name"]).toBe("lead");
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["x-extra"]).toBe("1");
    server.assertDone();
  });

  test("tool calls map both ways: specs and calls in, results sent back with their ids", async () => {
    await using server = ScriptedModelServer.start([
      {
        toolCalls: [
          { id: "call_a", name: "read_file", arguments: { path: "a.txt" } },
          { id: "call_b", name: "read_file", arguments: { path: "b.txt" } },
        ],
      },
      { text: "Both files read." },
    ]);
    const { client } = clientFor(server.url);
    const first = await client.complete(ask("read a and b"));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.message).toEqual({
      role: "assistant",
      content: null,
      toolCalls: [
        { id: "call_a", name: "read_file", arguments: '{"path":"a.txt"}' },
        { id: "call_b", name: "read_file", arguments: '{"path":"b.txt"}' },
      ],
    });

    const history: ChatMessage[] = [
      ...ask("read a and b").messages,
      first.message,
      { role: "tool", toolCallId: "call_a", content: "contents of a" },
      { role: "tool", toolCallId: "call_b", content: "no such file", isError: true },
    ];
    const second = await client.complete({ identity: "lead", messages: history, tools: [READ_FILE] });
    expect(second.message.content).toBe("Both files read.");

    expect(server.requests[0]!.body.tools).toEqual([
      {
        type: "function",
        function: { name: READ_FILE.name, description: READ_FILE.description, parameters: READ_FILE.parameters },
      },
    ]);
    expect(server.requests[1]!.body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
          { id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path":"b.txt"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "contents of a" },
      { role: "tool", tool_call_id: "call_b", content: "no such file" },
    ]);
    server.assertDone();
  });

  test("malformed tool-call JSON reaches the caller untouched", async () => {
    const broken = '{"path": "a.txt", oops';
    await using server = ScriptedModelServer.start([{ toolCalls: [{ id: "call_x", name: "read_file", arguments: broken }] }]);
    const { client } = clientFor(server.url);
    const response = await client.complete(ask("read"));
    expect(response.message.toolCalls).toEqual([{ id: "call_x", name: "read_file", arguments: broken }]);
    server.assertDone();
  });

  test("missing usage counts as zero, and no tools means no tools field", async () => {
    await using server = ScriptedModelServer.start([
      {
        status: 200,
        body: { choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "length" }] },
      },
    ]);
    const { client } = clientFor(server.url);
    const response = await client.complete(ask("hi", { tools: [] }));
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(response.finishReason).toBe("length");
    expect("tools" in server.requests[0]!.body).toBe(false);
    server.assertDone();
  });

  test("tool calls reported with finish_reason stop still finish as tool_calls", async () => {
    await using server = ScriptedModelServer.start([
      { toolCalls: [{ name: "read_file", arguments: { path: "a" } }], finishReason: "stop" },
    ]);
    const { client } = clientFor(server.url);
    expect((await client.complete(ask("read"))).finishReason).toBe("tool_calls");
    server.assertDone();
  });
});
