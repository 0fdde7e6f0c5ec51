import type { Server } from "bun";
import { OpenAIModelClient, type OpenAIModelClientOptions } from "../../src/model/openai-client.ts";
import type { RetryDeps, RetryInfo } from "../../src/model/retry.ts";
import type { ChatMessage, ModelRequest, ToolSpec } from "../../src/model/types.ts";

/** Retry dependencies that never wait: each asked-for delay is recorded instead. */
export function fakeRetryDeps(random = 0.5): { deps: RetryDeps; sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    deps: {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => random,
      now: () => Date.parse("2026-01-01T00:00:00Z"),
    },
  };
}

/** A live client on `baseUrl` (the scripted server's), with fake sleeps and its retries recorded. */
export function clientFor(baseUrl: string, options: Partial<OpenAIModelClientOptions> = {}) {
  const { deps, sleeps } = fakeRetryDeps();
  const retries: RetryInfo[] = [];
  const client = new OpenAIModelClient({
    model: "test-model",
    apiKey: "sk-test",
    baseUrl,
    timeoutMs: 5_000,
    onRetry: (info) => retries.push(info),
    retryDeps: deps,
    ...options,
  });
  return { client, sleeps, retries };
}

export const READ_FILE: ToolSpec = {
  name: "read_file",
  description: "Read a file in the workspace",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"], additionalProperties: false },
};

export function ask(content: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  const messages: ChatMessage[] = [
    { role: "system", content: "You are a test agent." },
    { role: "user", content },
  ];
  return { identity: "lead", messages, tools: [READ_FILE], ...extra };
}

/** A port nothing listens on: bound once by us, then released. */
export async function closedPortUrl(): Promise<string> {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  await probe.stop(true);
  return `http://127.0.0.1:${port}/v1`;
}

/**
 * A server on 127.0.0.1 that records each raw request body (and its headers) and gives `answer`:
 * a body that came chunked or without its exact Content-Length is refused (400),
 * as some servers and proxies do. Stop it with `server.stop(true)`.
 */
export function wholeBodyServer(answer: { body: string; contentType: string }): { server: Server<undefined>; url: string; bodies: string[]; headers: Headers[] } {
  const bodies: string[] = [];
  const headers: Headers[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const text = await request.text();
      if (request.headers.get("transfer-encoding") !== null || request.headers.get("content-length") !== String(Buffer.byteLength(text))) {
        return new Response(`length ${request.headers.get("content-length")}, transfer-encoding ${request.headers.get("transfer-encoding")}`, { status: 400 });
      }
      bodies.push(text);
      headers.push(request.headers);
      return new Response(answer.body, { headers: { "content-type": answer.contentType } });
    },
  });
  return { server, url: `http://127.0.0.1:${server.port}`, bodies, headers };
}
