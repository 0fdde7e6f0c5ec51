import { describe, expect, test } from "bun:test";
import { ModelUnavailableError } from "../../src/core/errors.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { startSocketServer } from "../support/socket-server.ts";
import type { AnswerPiece } from "../../src/model/types.ts";
import { ask, clientFor } from "./helpers.ts";

// Streamed answers over real HTTP: assembled from their chunks, told piece by
// piece, retried when cut, and given up on for good when the endpoint will not stream.

describe("streamed answers", () => {
  test("text arrives in pieces and is assembled; the request asks for a stream with usage", async () => {
    await using server = ScriptedModelServer.start([{ text: "Hello there, streaming world.", usage: { prompt_tokens: 12, completion_tokens: 6 } }]);
    const { client } = clientFor(server.url);
    const pieces: string[] = [];
    const response = await client.complete(ask("hi", { onText: (text) => pieces.push(text) }));
    expect(response).toEqual({
      message: { role: "assistant", content: "Hello there, streaming world." },
      finishReason: "stop",
      usage: { inputTokens: 12, outputTokens: 6 },
    });
    expect(pieces).toEqual(["Hello ", "there, ", "streaming ", "world."]);
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    server.assertDone();
  });

  test("reasoning_content and each call's arguments are told as they stream; the call named by its first piece", async () => {
    await using server = ScriptedModelServer.start([{ reasoning: "Think twice.", toolCalls: [{ id: "c1", name: "glob", arguments: { pattern: "*.md" } }] }]);
    const { client } = clientFor(server.url);
    const pieces: AnswerPiece[] = [];
    await client.complete(ask("hi", { onPiece: (piece) => pieces.push(piece) }));
    expect(pieces.filter((p) => p.kind === "thinking").map((p) => (p.kind === "thinking" ? p.text : "")).join("")).toBe("Think twice.");
    const input = pieces.filter((p) => p.kind === "tool_input");
    expect(input[0]).toEqual({ kind: "tool_input", index: 0, id: "c1", name: "glob", json: "" });
    expect(input.map((p) => (p.kind === "tool_input" ? p.json : "")).join("")).toBe('{"pattern":"*.md"}');
    server.assertDone();
  });

  test("tool-call arguments are put together from their deltas, each call by its index", async () => {
    const args = { path: "notes/today.md", content: "a longer body that spans several deltas\n" };
    await using server = ScriptedModelServer.start([
      {
        text: "Writing both.",
        toolCalls: [
          { id: "call_1", name: "write_file", arguments: args },
          { id: "call_2", name: "read_file", arguments: { path: "a.txt" } },
        ],
      },
    ]);
    const { client } = clientFor(server.url);
    const response = await client.complete(ask("write"));
    expect(response.finishReason).toBe("tool_calls");
    expect(response.message).toEqual({
      role: "assistant",
      content: "Writing both.",
      toolCalls: [
        { id: "call_1", name: "write_file", arguments: JSON.stringify(args) },
        { id: "call_2", name: "read_file", arguments: '{"path":"a.txt"}' },
      ],
    });
    server.assertDone();
  });

  test("a stream cut before finish_reason is retried; only the new attempt counts", async () => {
    await using server = ScriptedModelServer.start([
      { text: "This answer will be cut off halfway", cut: { afterChunks: 3 } },
      { text: "The whole answer." },
    ]);
    const { client, retries } = clientFor(server.url);
    const told: string[] = [];
    const response = await client.complete(
      ask("hi", { onText: (text) => told.push(text), onRetry: (info) => told.push(`<retry: ${info.reason}>`) }),
    );
    expect(response.message).toEqual({ role: "assistant", content: "The whole answer." });
    expect(told).toEqual(["This ", "answer ", "<retry: the answer stream was cut before it finished>", "The ", "whole ", "answer."]);
    // A request's own onRetry replaces the client's.
    expect(retries).toEqual([]);
    server.assertDone();
  });

  test("a connection reset in the middle of the stream is retried, then named with the host", async () => {
    // A barrier, not a clock: each connection is reset only once the client has
    // told the text it got (a reset that overtook it would discard it unread).
    let textSeen = Promise.withResolvers<void>();
    await using server = await startSocketServer("sse-reset", { resetAfter: () => textSeen.promise });
    const told: string[] = [];
    const { client } = clientFor(server.url, { maxRetries: 1 });
    const onText = (text: string) => {
      told.push(text);
      textSeen.resolve();
    };
    const onRetry = () => {
      told.push("<retry>");
      textSeen = Promise.withResolvers<void>();
    };
    const error = await client.complete(ask("hi", { onText, onRetry })).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `cannot reach the model endpoint at ${new URL(server.url).host} after 2 attempts (last: connection reset): check --base-url and that the endpoint is up`,
    );
    expect(told).toEqual(["Half an ans", "<retry>", "Half an ans"]);
  });

  test("cut every time: one line saying so, naming the host", async () => {
    const cut = { text: "never whole", cut: { afterChunks: 1 } };
    await using server = ScriptedModelServer.start([cut, cut, cut]);
    const { client } = clientFor(server.url, { maxRetries: 2 });
    const error = await client.complete(ask("hi")).catch((e: Error) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toBe(
      `the model endpoint at ${new URL(server.url).host} cut the answer off after 3 attempts (last: the answer stream was cut before it finished): check --base-url and that the endpoint is up`,
    );
    server.assertDone();
  });

  test("a stream without a finish reason that ends with [DONE] is whole (a few local servers send none)", async () => {
    const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta }] })}\n\n`;
    const body = `${chunk({ content: "no finish " })}${chunk({ content: "reason" })}data: [DONE]\n\n`;
    await using server = ScriptedModelServer.start([{ raw: { contentType: "text/event-stream", body } }]);
    const { client, retries } = clientFor(server.url);
    expect(await client.complete(ask("hi"))).toEqual({
      message: { role: "assistant", content: "no finish reason" },
      finishReason: "other",
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(retries).toEqual([]);
    server.assertDone();
  });

  test("an error chunk inside the stream is the endpoint's answer: not retried, its message shown", async () => {
    const broken = `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hal"}}]}\n\ndata: {"error":{"message":"upstream died"}}\n\n`;
    await using server = ScriptedModelServer.start([{ raw: { contentType: "text/event-stream", body: broken } }]);
    const { client, retries } = clientFor(server.url);
    const error = await client.complete(ask("hi")).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `the model endpoint ${server.url} reported an error inside its answer stream (stream error: upstream died): not retried, as the answer was already under way; run again`,
    );
    expect(retries).toEqual([]);
    server.assertDone();
  });

  test("an event stream of something else is an invalid response, retried once", async () => {
    const junk = { raw: { contentType: "text/event-stream", body: "data: <html>oops</html>\n\n" } };
    await using server = ScriptedModelServer.start([junk, junk]);
    const { client } = clientFor(server.url);
    const error = await client.complete(ask("hi")).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `the endpoint ${server.url} returned an invalid response (first 200 bytes: <html>oops</html>): check --base-url (it usually ends in /v1)`,
    );
    server.assertDone();
  });
});

describe("endpoints that will not stream", () => {
  test("a 400 refusing `stream` falls back at once to a whole answer, and the client remembers", async () => {
    const noStream = (request: { body: Record<string, unknown> }) => {
      if ("stream" in request.body) throw new Error("asked for a stream again");
    };
    await using server = ScriptedModelServer.start([
      { status: 400, body: { error: { message: "Streaming is not supported by this model", param: "stream" } } },
      { text: "whole answer", check: noStream },
      { text: "second request, still whole", check: noStream },
    ]);
    const { client, sleeps } = clientFor(server.url);
    const pieces: string[] = [];
    expect((await client.complete(ask("hi", { onText: (t) => pieces.push(t) }))).message.content).toBe("whole answer");
    // The whole text is told at once, so a terminal still shows it.
    expect(pieces).toEqual(["whole answer"]);
    expect(client.streaming).toBe(false);
    expect((await client.complete(ask("again"))).message.content).toBe("second request, still whole");
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(3);
    server.assertDone();
  });

  test("a whole JSON completion to a streaming request is taken, and streaming is not asked again", async () => {
    await using server = ScriptedModelServer.start([
      { status: 200, body: { choices: [{ index: 0, message: { role: "assistant", content: "plain" }, finish_reason: "stop" }] } },
      { text: "also plain", check: (request) => expect(request.body.stream).toBeUndefined() },
    ]);
    const { client } = clientFor(server.url);
    expect((await client.complete(ask("hi"))).message.content).toBe("plain");
    expect((await client.complete(ask("hi"))).message.content).toBe("also plain");
    server.assertDone();
  });

  test("another 400 is not taken for a refusal to stream", async () => {
    await using server = ScriptedModelServer.start([{ status: 400, body: { error: { message: "Invalid schema for function 'read_file'" } } }]);
    const { client } = clientFor(server.url);
    const error = await client.complete(ask("hi")).catch((e: Error) => e);
    expect((error as Error).message).toContain("rejected the request (HTTP 400: Invalid schema");
    expect(client.streaming).toBe(true);
    server.assertDone();
  });
});
