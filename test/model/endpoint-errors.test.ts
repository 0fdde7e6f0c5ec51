import { describe, expect, test } from "bun:test";
import {
  EmptyModelAnswerError,
  InvalidModelResponseError,
  ModelRequestError,
  ModelUnavailableError,
  QuotaExceededError,
  UnknownModelError,
} from "../../src/core/errors.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { type SocketBehaviour, startSocketServer } from "../support/socket-server.ts";
import { ask, clientFor, closedPortUrl } from "./helpers.ts";

// Endpoint errors classified by what the answer says, each ending in one exact
// line; streamed and non-streamed requests alike.

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (error: Error) => error,
  );
}

describe.each([true, false])("with stream: %p", (stream) => {
  test("404 with model_not_found: unknown model, not retried", async () => {
    await using server = ScriptedModelServer.start([
      {
        status: 404,
        body: { error: { message: "The model `nope` does not exist or you do not have access to it.", code: "model_not_found" } },
      },
    ]);
    const { client, sleeps } = clientFor(server.url, { model: "nope", stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(UnknownModelError);
    expect(error.message).toBe(
      `unknown model nope at ${server.url} (HTTP 404: The model \`nope\` does not exist or you do not have access to it.): check --model / AGENT_MODEL`,
    );
    expect(sleeps).toEqual([]);
    server.assertDone();
  });

  test("404 whose message names the model (Ollama's) is an unknown model too", async () => {
    await using server = ScriptedModelServer.start([{ status: 404, body: { error: { message: 'model "llama9" not found, try pulling it first' } } }]);
    const { client } = clientFor(server.url, { model: "llama9", stream });
    expect(await failure(client.complete(ask("hi")))).toBeInstanceOf(UnknownModelError);
    server.assertDone();
  });

  test("another 404 (a mock's 'no fixture matched', a wrong path): the URL and --base-url", async () => {
    await using server = ScriptedModelServer.start([{ status: 404, body: { error: { message: "No fixture matched", type: "invalid_request_error" } } }]);
    const { client, sleeps } = clientFor(server.url, { stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error).not.toBeInstanceOf(UnknownModelError);
    expect(error.message).toBe(`endpoint answered 404 for ${server.url}/chat/completions (No fixture matched): check --base-url (it usually ends in /v1)`);
    expect(sleeps).toEqual([]);
    server.assertDone();
  });

  test("429 insufficient_quota: never retried, quota exceeded for this key", async () => {
    const quota = {
      message: "You exceeded your current quota, please check your plan and billing details.",
      type: "insufficient_quota",
      code: "insufficient_quota",
    };
    await using server = ScriptedModelServer.start([{ status: 429, headers: { "retry-after": "1" }, body: { error: quota } }]);
    const { client, sleeps } = clientFor(server.url, { stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect(error.message).toBe(
      `quota exceeded for this key at ${server.url} (HTTP 429: ${quota.message}): check the plan and billing of OPENAI_API_KEY`,
    );
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  test("429 rate limit: retried after Retry-After each time, then one line saying to wait", async () => {
    const limited = { status: 429, headers: { "retry-after": "3" }, body: { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } } };
    await using server = ScriptedModelServer.start([limited, limited, limited]);
    const { client, sleeps } = clientFor(server.url, { maxRetries: 2, stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toBe(
      `the model endpoint ${server.url} kept rate limiting the requests after 3 attempts (last: HTTP 429: Rate limit reached): wait a minute and run again`,
    );
    expect(sleeps).toEqual([3000, 3000]);
    server.assertDone();
  });

  test("a 200 that is not a completion: retried once, then its first 200 bytes", async () => {
    const page = `<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>${"x".repeat(400)}</body></html>`;
    const html = { raw: { contentType: "text/html", body: page } };
    await using server = ScriptedModelServer.start([html, html]);
    const { client, retries } = clientFor(server.url, { stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(InvalidModelResponseError);
    const first200 = page.slice(0, 200).replace(/\s+/g, " ");
    expect(error.message).toBe(
      `the endpoint ${server.url} returned an invalid response (first 200 bytes: ${first200}): check --base-url (it usually ends in /v1)`,
    );
    expect(retries).toHaveLength(1);
    server.assertDone();
  });

  test("JSON that is not a completion is invalid too, and a good answer after it is taken", async () => {
    await using server = ScriptedModelServer.start([{ status: 200, body: { hello: "not an API" } }, { text: "real answer" }]);
    const { client, retries } = clientFor(server.url, { stream });
    expect((await client.complete(ask("hi"))).message.content).toBe("real answer");
    expect(retries.map((r) => r.reason)).toEqual(["invalid response: Invalid input: expected array, received undefined at choices"]);
    server.assertDone();
  });

  test("an empty completion is asked again once; twice empty is an error, never an empty success", async () => {
    await using server = ScriptedModelServer.start([{ text: "" }, { text: null }]);
    const { client, retries } = clientFor(server.url, { stream });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(EmptyModelAnswerError);
    expect(error.message).toBe("the model test-model answered with no text and no tool calls (2 times): ask again, or try another model");
    expect(retries.map((r) => r.reason)).toEqual(["an empty answer: no text, no tool calls"]);
    server.assertDone();
  });

  test("an empty completion followed by a real one succeeds", async () => {
    await using server = ScriptedModelServer.start([{ text: "   " }, { text: "second time lucky" }]);
    const { client } = clientFor(server.url, { stream });
    expect((await client.complete(ask("hi"))).message.content).toBe("second time lucky");
    server.assertDone();
  });
});

describe("connection failures: retried, then one line naming the host", () => {
  test.each<[SocketBehaviour, string]>([
    ["reset", "connection reset"],
    ["close", "connection reset"],
    ["plain-http", "TLS handshake failed (EPROTO)"],
  ])("a server that does %s", async (behaviour, detail) => {
    await using server = await startSocketServer(behaviour);
    const { client, sleeps } = clientFor(server.url, { maxRetries: 2 });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toBe(
      `cannot reach the model endpoint at ${new URL(server.url).host} after 3 attempts (last: ${detail}): check --base-url and that the endpoint is up`,
    );
    expect(error.message).not.toMatch(/verbose|Is the computer|fetch\(\)/);
    expect(sleeps).toHaveLength(2);
    expect(server.connections).toBeGreaterThanOrEqual(3);
  });

  test("nothing listening: connection refused", async () => {
    const url = await closedPortUrl();
    const { client } = clientFor(url, { maxRetries: 1 });
    const error = await failure(client.complete(ask("hi")));
    expect(error.message).toBe(
      `cannot reach the model endpoint at ${new URL(url).host} after 2 attempts (last: connection refused): check --base-url and that the endpoint is up`,
    );
  });
});
