import { describe, expect, test } from "bun:test";
import { ContextOverflowError, ModelRequestError, ModelUnavailableError } from "../../src/core/errors.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { DEFAULT_RETRY_TIMING, type RetryContext, retryAfterMs, retryDelay } from "../../src/model/retry.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { ask, clientFor, closedPortUrl, fakeRetryDeps } from "./helpers.ts";

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (error: Error) => error,
  );
}

describe("retries over real HTTP", () => {
  test("429 with Retry-After: 2 waits 2000 ms, then succeeds on the second request", async () => {
    await using server = ScriptedModelServer.start([
      { status: 429, headers: { "Retry-After": "2" }, body: { error: { message: "Rate limit reached" } } },
      { text: "made it" },
    ]);
    const { client, sleeps, retries } = clientFor(server.url);
    const response = await client.complete(ask("hi"));
    expect(response.message.content).toBe("made it");
    expect(sleeps).toEqual([2000]);
    expect(retries).toEqual([{ attempt: 1, delayMs: 2000, reason: "HTTP 429: Rate limit reached" }]);
    expect(server.requests).toHaveLength(2);
    server.assertDone();
  });

  test("500 on every attempt gives ModelUnavailableError after exactly maxRetries + 1 requests", async () => {
    const maxRetries = 3;
    await using server = ScriptedModelServer.start(
      Array.from({ length: maxRetries + 1 }, () => ({ status: 500, body: { error: { message: "upstream exploded" } } })),
    );
    const { client, sleeps } = clientFor(server.url, { maxRetries });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toBe(
      `the model endpoint ${server.url} failed after 4 attempts (last: HTTP 500: upstream exploded): check --base-url / that the endpoint is up`,
    );
    expect(server.requests).toHaveLength(maxRetries + 1);
    // Full jitter with random() = 0.5 over 500 ms · 2^n.
    expect(sleeps).toEqual([250, 500, 1000]);
    server.assertDone();
  });

  test("every retryable status is retried", async () => {
    const statuses = [429, 500, 502, 503, 504, 529];
    await using server = ScriptedModelServer.start([...statuses.map((status) => ({ status })), { text: "finally" }]);
    const { client, retries } = clientFor(server.url, { maxRetries: statuses.length });
    expect((await client.complete(ask("hi"))).message.content).toBe("finally");
    expect(retries.map((r) => r.reason)).toEqual(statuses.map((s) => `HTTP ${s}: scripted ${s}`));
    server.assertDone();
  });

  test("an unreachable endpoint is retried, then named in one clear line", async () => {
    const url = await closedPortUrl();
    const { client, sleeps } = clientFor(url, { maxRetries: 2 });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toBe(
      `cannot reach the model endpoint at ${new URL(url).host} after 3 attempts (last: connection refused): check --base-url and that the endpoint is up`,
    );
    expect(sleeps).toHaveLength(2);
  });

  test("a request slower than the timeout is retried, then reported as timed out", async () => {
    await using server = ScriptedModelServer.start([
      { delayMs: 1_000, text: "too late" },
      { delayMs: 1_000, text: "too late again" },
    ]);
    const { client, retries } = clientFor(server.url, { timeoutMs: 100, maxRetries: 1 });
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(error.message).toContain("after 2 attempts (last: timed out after 100 ms)");
    expect(retries.map((r) => r.reason)).toEqual(["timed out after 100 ms"]);
    expect(server.requests).toHaveLength(2);
    server.assertDone();
  });

  test("a timeout followed by an answer succeeds", async () => {
    await using server = ScriptedModelServer.start([{ delayMs: 1_000, text: "too late" }, { text: "on time" }]);
    const { client } = clientFor(server.url, { timeoutMs: 100 });
    expect((await client.complete(ask("hi"))).message.content).toBe("on time");
    server.assertDone();
  });
});

describe("failures that are not retried", () => {
  test("401 is an authentication error naming the endpoint and the key, after one request", async () => {
    await using server = ScriptedModelServer.start([
      { status: 401, body: { error: { message: "Incorrect API key provided", code: "invalid_api_key" } } },
    ]);
    const { client, sleeps } = clientFor(server.url);
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as ModelRequestError).status).toBe(401);
    expect(error.message).toBe(
      `authentication failed at ${server.url} (HTTP 401: Incorrect API key provided): check OPENAI_API_KEY`,
    );
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });


  test("a context-overflow 400 (OpenAI's code) is a ContextOverflowError", async () => {
    await using server = ScriptedModelServer.start([
      {
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            type: "invalid_request_error",
            code: "context_length_exceeded",
          },
        },
      },
    ]);
    const { client, sleeps } = clientFor(server.url);
    const error = await failure(client.complete(ask("a very long prompt")));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error.message).toContain("context window of test-model");
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  test("a context-overflow 400 recognised by its message alone (llama.cpp)", async () => {
    await using server = ScriptedModelServer.start([
      { status: 400, body: { error: { code: 400, message: "the request exceeds the available context size" } } },
    ]);
    const { client } = clientFor(server.url);
    expect(await failure(client.complete(ask("hi")))).toBeInstanceOf(ContextOverflowError);
    server.assertDone();
  });

  test("another 400 is a request error carrying the server's message", async () => {
    await using server = ScriptedModelServer.start([
      { status: 400, body: { error: { message: "Invalid schema for function 'read_file'" } } },
    ]);
    const { client } = clientFor(server.url);
    const error = await failure(client.complete(ask("hi")));
    expect(error).toBeInstanceOf(ModelRequestError);
    expect(error.message).toContain("HTTP 400: Invalid schema for function 'read_file'");
    server.assertDone();
  });

  test("an aborted signal ends the request with an AbortError and no retry", async () => {
    const controller = new AbortController();
    // Aborted once the server has the request: the abort lands on a request in flight.
    await using server = ScriptedModelServer.start([{ check: () => controller.abort(), delayMs: 2_000, text: "never read" }]);
    const { client, sleeps } = clientFor(server.url);
    const error = await failure(client.complete(ask("hi", { signal: controller.signal })));
    expect(error.name).toBe("AbortError");
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });

  test("an abort during the backoff wait stops the retries", async () => {
    await using server = ScriptedModelServer.start([{ status: 503 }]);
    const controller = new AbortController();
    const client = new OpenAIModelClient({
      model: "m",
      apiKey: "k",
      baseUrl: server.url,
      timeoutMs: 5_000,
      retryTiming: { baseDelayMs: 60_000 },
      retryDeps: { random: () => 1 },
      onRetry: () => controller.abort(),
    });
    const error = await failure(client.complete(ask("hi", { signal: controller.signal })));
    expect(error.name).toBe("AbortError");
    expect(server.requests).toHaveLength(1);
    server.assertDone();
  });
});

describe("retry delays", () => {
  const context = (random: number): RetryContext => ({
    endpoint: "http://x/v1",
    model: "m",
    timeoutMs: 1000,
    timing: DEFAULT_RETRY_TIMING,
    deps: { ...fakeRetryDeps(random).deps },
  });
  const http = (headers: Record<string, string>) =>
    ({ kind: "http", status: 429, error: { message: "" }, headers: new Headers(headers), cause: null }) as const;

  test("backoff doubles from 500 ms and is capped at 30 s, with full jitter", () => {
    const top = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelay(http({}), n, context(0.999999)));
    expect(top.map((ms) => Math.round(ms / 10) * 10)).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(retryDelay(http({}), 5, context(0))).toBe(0);
  });

  test("retry-after-ms wins, Retry-After may be seconds or an HTTP date, and both are capped", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after-ms": "1500.5", "retry-after": "9" }), now)).toBe(1500.5);
    expect(retryAfterMs(new Headers({ "retry-after": "3" }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:07 GMT" }), now)).toBe(7000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryDelay(http({ "retry-after": "3600" }), 0, context(0.5))).toBe(60_000);
  });
});
