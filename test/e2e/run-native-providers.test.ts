import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatCompletionRequest, LLMock } from "@copilotkit/aimock";
import { ensureBinary } from "./agent-binary.ts";
import { ResultLine, runSetup } from "./run-fixture.ts";

// The native adapters (--provider anthropic, --provider openai-responses) on the
// compiled binary against @copilotkit/aimock, which serves Anthropic Messages at
// /v1/messages and OpenAI Responses at /v1/responses with its own SSE writers.
// aimock turns each request into a chat-completions shape for its fixtures (and
// its journal), so the predicates read like those of aimock.test.ts. Its answers
// carry a thinking block (Anthropic) and a reasoning item (Responses), which
// the adapters keep; what exactly goes back is checked on the scripted server
// (run-anthropic.test.ts, run-responses.test.ts), as aimock's journal keeps
// only its own translation of each request.

beforeAll(() => {
  ensureBinary();
}, 120_000);

let mock: LLMock | undefined;
afterEach(async () => {
  await mock?.stop();
  mock = undefined;
});

type Message = ChatCompletionRequest["messages"][number];
const text = (message: Message | undefined) => (typeof message?.content === "string" ? message.content : "");
const last = (request: ChatCompletionRequest) => request.messages.at(-1);

async function startMock(): Promise<LLMock> {
  const server = new LLMock({ port: 0, host: "127.0.0.1", logLevel: "silent" });
  server.on(
    { predicate: (r) => text(last(r)) === "create hello.txt" },
    {
      reasoning: "The user wants a file; write_file makes it.",
      toolCalls: [{ name: "write_file", arguments: JSON.stringify({ path: "hello.txt", content: "hello from aimock\n" }) }],
      usage: { input_tokens: 120, output_tokens: 30 },
    },
  );
  server.on({ predicate: (r) => last(r)?.role === "tool" }, { content: "Created hello.txt with one line.", usage: { input_tokens: 200, output_tokens: 12 } });
  await server.start();
  return server;
}

describe.each([
  // provider, base URL (from aimock's root), model, env with its key, its price per token in and out
  ["anthropic", "", "claude-sonnet-4-5", { ANTHROPIC_API_KEY: "test-anthropic-key", OPENAI_API_KEY: undefined }, [3e-6, 15e-6]],
  ["openai-responses", "/v1", "gpt-5-mini", {}, [0.25e-6, 2e-6]],
] as const)("agent run --provider %s through aimock", (provider, path, model, env, [inPrice, outPrice]) => {
  test("a write_file call and a final answer, streamed, with usage and cost", async () => {
    mock = await startMock();
    const { run, workspace } = runSetup();
    const result = await run(
      [
        "create hello.txt",
        ...["--provider", provider, "--base-url", `${mock.url}${path}`, "--model", model],
        ...["--permission-mode", "acceptEdits", "--output", "stream-json", "--include-partial-messages", "--quiet"],
      ],
      { env },
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(workspace, "hello.txt"), "utf8")).toBe("hello from aimock\n");
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    // Streamed: the final answer arrived in pieces before its whole line.
    const deltas = lines.filter((line) => line.type === "assistant_delta").map((line) => line.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toContain("Created hello.txt with one line.");
    const final = ResultLine.parse(lines.at(-1));
    expect(final).toMatchObject({ subtype: "success", result: "Created hello.txt with one line.", turns: 2, model });
    expect(final.usage).toMatchObject({ input_tokens: 320, output_tokens: 42, model_calls: 2, tool_calls: 1 });
    expect(final.total_cost_usd).toBeCloseTo(320 * inPrice + 42 * outPrice, 9);
    const requests = mock.getRequests();
    expect(requests.map((entry) => [entry.path, entry.response.status, (entry.body as { stream?: boolean }).stream])).toEqual([
      [provider === "anthropic" ? "/v1/messages" : "/v1/responses", 200, true],
      [provider === "anthropic" ? "/v1/messages" : "/v1/responses", 200, true],
    ]);
    // The second request carries the call and its result, paired by the call's id.
    const second = requests[1]!.body as ChatCompletionRequest;
    const call = second.messages.flatMap((m) => m.tool_calls ?? [])[0];
    expect(call?.function.name).toBe("write_file");
    expect(last(second)).toMatchObject({ role: "tool", tool_call_id: call?.id });
  }, 60_000);
});

test("a key for the other provider is not used: --provider anthropic without ANTHROPIC_API_KEY ends with the missing key", async () => {
  const { run } = runSetup();
  const result = await run(["hello", "--provider", "anthropic", "--base-url", "http://127.0.0.1:9/"]);
  expect(result.code).toBe(3);
  expect(result.stderr).toContain("no API key: set ANTHROPIC_API_KEY");
});
