import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatCompletionRequest, LLMock } from "@copilotkit/aimock";
import { ensureBinary } from "./agent-binary.ts";
import { parseResult, runSetup } from "./run-fixture.ts";

// The compiled binary against an OpenAI-compatible mock server that nobody on
// this project wrote (@copilotkit/aimock, from npm): its own SSE streaming, its
// own non-streamed completions, its own 404 when no fixture matches. Fixtures
// route on what a real model sees — the system prompt says who is asking, the
// last message what it is answering.

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
const system = (request: ChatCompletionRequest) => text(request.messages.find((m) => m.role === "system"));
const last = (request: ChatCompletionRequest) => request.messages.at(-1);
const lead = (request: ChatCompletionRequest) => system(request).startsWith("You are the Lead");
const alice = (request: ChatCompletionRequest) => system(request).startsWith("You are alice, a teammate");
/** The last message is the result of a call to `tool`. */
const resultOf = (request: ChatCompletionRequest, tool: string) => {
  const message = last(request);
  if (message?.role !== "tool") return false;
  const calls = request.messages.flatMap((m) => m.tool_calls ?? []);
  return calls.find((call) => call.id === message.tool_call_id)?.function.name === tool;
};
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: JSON.stringify(args) }] });

/** aimock with the fixtures of both scenarios; `refuseStreaming` makes it answer `stream: true` with a 400 naming `stream`. */
async function startMock(refuseStreaming: boolean): Promise<LLMock> {
  const server = new LLMock({ port: 0, host: "127.0.0.1", logLevel: "silent" });
  if (refuseStreaming) {
    server.on(
      { predicate: (request) => request.stream === true },
      { status: 400, error: { message: "stream is not supported by this deployment", type: "invalid_request_error", param: "stream" } },
    );
  }
  // Write, then answer.
  server.on({ predicate: (r) => lead(r) && text(last(r)) === "create hello.txt" }, call("write_file", { path: "hello.txt", content: "hello from aimock\n" }));
  server.on({ predicate: (r) => lead(r) && resultOf(r, "write_file") }, { content: "Created hello.txt with one line." });
  // A teammate: the Lead spawns alice, alice writes and reports, the Lead answers her result.
  server.on(
    { predicate: (r) => lead(r) && text(last(r)) === "have alice write notes.txt" },
    call("spawn_teammate", { name: "alice", role: "writer", prompt: "Write notes.txt saying: notes by alice" }),
  );
  server.on({ predicate: (r) => lead(r) && resultOf(r, "spawn_teammate") }, { content: "alice is on it." });
  server.on({ predicate: (r) => alice(r) && last(r)?.role === "user" }, call("write_file", { path: "notes.txt", content: "notes by alice\n" }));
  server.on({ predicate: (r) => alice(r) && resultOf(r, "write_file") }, { content: "notes.txt is written." });
  server.on(
    // Her result, then her idle notice: the event turn's last user messages.
    { predicate: (r) => lead(r) && last(r)?.role === "user" && r.messages.slice(-2).some((m) => text(m).includes("notes.txt is written.")) },
    { content: "alice wrote notes.txt." },
  );
  await server.start();
  return server;
}

describe.each([
  ["streaming", false],
  ["an endpoint that refuses to stream", true],
])("agent run through aimock, %s", (_label, refuseStreaming) => {
  test("a write-then-answer turn", async () => {
    mock = await startMock(refuseStreaming);
    const { run, workspace } = runSetup();
    const result = await run(["create hello.txt", "--base-url", `${mock.url}/v1`, "--permission-mode", "acceptEdits", "--output", "json", "--quiet"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "success", result: "Created hello.txt with one line.", turns: 2 });
    expect(readFileSync(join(workspace, "hello.txt"), "utf8")).toBe("hello from aimock\n");
    const asked = mock.getRequests().map((entry) => (entry.body as { stream?: boolean } | null)?.stream === true);
    // Streaming: the second request streams too, so the first answer was a real
    // event stream (a whole JSON answer would have turned streaming off).
    // Refused: one streaming request, then none — the fallback is remembered for the run.
    expect(asked).toEqual(refuseStreaming ? [true, false, false] : [true, true]);
  }, 60_000);

  test("a teammate run: alice writes, reports, and the Lead answers her result", async () => {
    mock = await startMock(refuseStreaming);
    const { run, workspace } = runSetup();
    const result = await run(["have alice write notes.txt", "--base-url", `${mock.url}/v1`, "--permission-mode", "acceptEdits", "--output", "json", "--quiet"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(result.stdout)).toMatchObject({
      subtype: "success",
      result: "alice wrote notes.txt.",
      events: 2,
      event_turns: 1,
      teammates: [{ name: "alice", role: "writer", state: "idle" }],
    });
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("notes by alice\n");
    const requests = mock.getRequests();
    // Lead ×3 (spawn, answer, event turn) and alice ×2, plus the one refused streaming request.
    expect(requests).toHaveLength(refuseStreaming ? 6 : 5);
    expect(requests.every((entry) => entry.response.status === (refuseStreaming && (entry.body as { stream?: boolean }).stream ? 400 : 200))).toBe(true);
  }, 60_000);
});

test("aimock's 404 for a request no fixture matches is reported as a wrong URL, not an unknown model", async () => {
  mock = new LLMock({ port: 0, host: "127.0.0.1", logLevel: "silent" });
  await mock.start();
  const { run } = runSetup();
  const result = await run(["anything", "--base-url", `${mock.url}/v1`, "--quiet"]);
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
    code: 3,
    stdout: "",
    stderr: `agent: run ended with error_model: endpoint answered 404 for ${mock.url}/v1/chat/completions (No fixture matched): check --base-url (it usually ends in /v1)\n`,
  });
});
