import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { AbortError, type Options, type SDKMessage, type SDKUserMessage, query } from "@anthropic-ai/claude-agent-sdk";
import type { RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY } from "../e2e/agent-binary.ts";
import { scriptedServers } from "../e2e/run-fixture.ts";

// The Claude Agent SDK (pinned in package.json, unpatched) drives the compiled
// binary as it drives `claude`: pathToClaudeCodeExecutable is dist/agent, the
// endpoint the scripted model server. What the SDK sends (argv, initialize,
// control requests) and what it expects back are its own.

const startServer = scriptedServers();

function sdkRun(server: ScriptedModelServer) {
  const root = realpathSync(tempDir("agent-claude-sdk-"));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const stderr: string[] = [];
  const options = (more: Options = {}): Options => ({
    pathToClaudeCodeExecutable: AGENT_BINARY,
    cwd: workspace,
    env: { ...process.env, OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key", AGENT_STATE_DIR: join(root, "state"), NO_COLOR: "1" },
    stderr: (text) => stderr.push(text),
    ...more,
  });
  /** Every message of a query, and the error its iterator ended with, if any. */
  const run = async (prompt: string | AsyncIterable<SDKUserMessage>, more: Options = {}, onMessage?: (message: SDKMessage) => void) => {
    const messages: SDKMessage[] = [];
    let error: Error | undefined;
    try {
      for await (const message of query({ prompt, options: options(more) })) {
        messages.push(message);
        onMessage?.(message);
      }
    } catch (caught) {
      error = caught as Error;
    }
    return { messages, error, results: messages.filter((m) => m.type === "result") };
  };
  return { workspace, run, stderr, options };
}

const userTexts = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === "user").map((m) => m.content);

/** A user message as the SDK's streaming input takes it. */
const userMessage = (text: string): SDKUserMessage => ({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });

/** Settles when `resolve` is called: a hand-held barrier between the test and a generator. */
function barrier() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("the Claude Agent SDK drives agent", () => {
  test("a query: its systemPrompt reaches the model request; init, the answer and exactly one result, shaped as the SDK's types", async () => {
    const server = startServer([
      { text: "hello from the model", check: (r) => expect(String(r.body.messages[0]!.content)).toStartWith("You answer in haiku.") },
    ]);
    const { run, stderr } = sdkRun(server);
    const { messages, error, results } = await run("say hi", { systemPrompt: "You answer in haiku." });
    expect({ error: error?.message, stderr: stderr.join("").split("\n").filter((line) => line.startsWith("agent:")) }).toEqual({ error: undefined, stderr: [] });
    expect(messages[0]).toMatchObject({ type: "system", subtype: "init", skills: [], plugins: [], claude_code_version: expect.any(String) });
    const sessionId = (messages[0] as { session_id: string }).session_id;
    expect(messages.find((m) => m.type === "assistant")).toMatchObject({ message: { content: [{ type: "text", text: "hello from the model" }] }, parent_tool_use_id: null });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ subtype: "success", is_error: false, result: "hello from the model", num_turns: 1, stop_reason: "end_turn", session_id: sessionId });
    expect(results[0]).toHaveProperty("modelUsage");
    expect(typeof (results[0] as { uuid: string }).uuid).toBe("string");
    server.assertDone();
  });

  test("permissionMode acceptEdits: a write_file call writes the file", async () => {
    const server = startServer([
      { toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "notes.txt", content: "written\n" } }] },
      { text: "done" },
    ]);
    const { run, workspace } = sdkRun(server);
    const { error, results, messages } = await run("write notes.txt", { permissionMode: "acceptEdits" });
    expect(error).toBeUndefined();
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("written\n");
    expect(messages.find((m) => m.type === "assistant" && m.message.content.some((block) => block.type === "tool_use"))).toBeDefined();
    expect(results.map((r) => r.subtype)).toEqual(["success"]);
    server.assertDone();
  });

  test("streaming input over two turns: one session, exactly one result each", async () => {
    const server = startServer([
      { text: "first answer" },
      { text: "second answer", check: (r) => expect(userTexts(r)).toEqual(["first question", "second question"]) },
    ]);
    const { run } = sdkRun(server);
    const firstResult = barrier();
    async function* prompts() {
      yield userMessage("first question");
      await firstResult.promise;
      yield userMessage("second question");
    }
    const { error, results } = await run(prompts(), {}, (message) => {
      if (message.type === "result") firstResult.resolve();
    });
    expect(error).toBeUndefined();
    expect(results.map((r) => (r as { result: string }).result)).toEqual(["first answer", "second answer"]);
    expect(new Set(results.map((r) => r.session_id)).size).toBe(1);
    server.assertDone();
  });

  test("setModel and setPermissionMode between turns: the next request names the model, the next edit needs no question", async () => {
    const server = startServer([
      { toolCalls: [{ id: "call_1", name: "write_file", arguments: { path: "first.txt", content: "1\n" } }] },
      { text: "refused", check: (r) => expect(r.body.model).toBe("gpt-4o-mini") },
      { toolCalls: [{ id: "call_2", name: "write_file", arguments: { path: "second.txt", content: "2\n" } }], check: (r) => expect(r.body.model).toBe("other-model") },
      { text: "written" },
    ]);
    const { options, workspace } = sdkRun(server);
    const switched = barrier();
    async function* prompts() {
      yield userMessage("write first.txt");
      await switched.promise;
      yield userMessage("write second.txt");
    }
    const q = query({ prompt: prompts(), options: options() });
    const results: SDKMessage[] = [];
    for await (const message of q) {
      if (message.type !== "result") continue;
      results.push(message);
      if (results.length === 1) {
        await q.setModel("other-model");
        await q.setPermissionMode("acceptEdits");
        switched.resolve();
      }
    }
    expect(results.map((r) => (r as { result: string }).result)).toEqual(["refused", "written"]);
    expect([existsSync(join(workspace, "first.txt")), existsSync(join(workspace, "second.txt"))]).toEqual([false, true]);
    server.assertDone();
  });

  test("resume continues the session it names, continue the most recent one", async () => {
    const server = startServer([
      { text: "noted" },
      { text: "seven", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "which number?"]) },
      { text: "still seven", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "which number?", "and now?"]) },
    ]);
    const { run } = sdkRun(server);
    const first = await run("remember 7");
    const sessionId = first.results[0]!.session_id;
    const resumed = await run("which number?", { resume: sessionId });
    const continued = await run("and now?", { continue: true });
    expect([first.error, resumed.error, continued.error]).toEqual([undefined, undefined, undefined]);
    expect([resumed.results[0]!.session_id, continued.results[0]!.session_id]).toEqual([sessionId, sessionId]);
    server.assertDone();
  });

  test("interrupt() mid-answer resolves; the turn ends as interrupted and the next message is answered", async () => {
    const never = barrier();
    const server = startServer([
      { text: "one two three four five six seven eight", hold: { afterChunks: 2, until: never.promise } },
      { text: "after the interrupt" },
    ]);
    const { options } = sdkRun(server);
    const firstResult = barrier();
    async function* prompts() {
      yield userMessage("count slowly");
      await firstResult.promise;
      yield userMessage("go on");
    }
    const q = query({ prompt: prompts(), options: options({ includePartialMessages: true }) });
    let interruptAnswer: Promise<unknown> | undefined;
    const results: SDKMessage[] = [];
    let error: Error | undefined;
    try {
      for await (const message of q) {
        // The answer is streaming in: interrupt it.
        if (message.type === "stream_event" && interruptAnswer === undefined) interruptAnswer = q.interrupt();
        if (message.type === "result") {
          results.push(message);
          firstResult.resolve();
        }
      }
    } catch (caught) {
      error = caught as Error;
    }
    never.resolve();
    expect(error).toBeUndefined();
    expect(interruptAnswer).toBeDefined();
    await interruptAnswer;
    expect(results.map((r) => [(r as { subtype: string }).subtype, (r as { is_error: boolean }).is_error])).toEqual([
      ["error_during_execution", true],
      ["success", false],
    ]);
    expect(results[1]).toMatchObject({ result: "after the interrupt" });
  });

  test("abort: the query rejects with an AbortError, and the session is free for the next query", async () => {
    const never = barrier();
    // The next query may first finish the turn the abort cut (durable turns), then answer its own prompt.
    const server = startServer([{ text: "one two three four five", hold: { afterChunks: 3, until: never.promise } }], { respond: () => ({ text: "fresh" }) });
    const { run } = sdkRun(server);
    const abortController = new AbortController();
    const aborted = await run("start", { abortController, includePartialMessages: true }, (message) => {
      if (message.type === "stream_event") abortController.abort();
    });
    never.resolve();
    expect(aborted.error).toBeInstanceOf(AbortError);
    // Its process may still be exiting (the SDK stops it after 2 s): wait for the session rather than fail on it.
    const next = await run("again", { continue: true, extraArgs: { "wait-lock": null } });
    expect(next.error).toBeUndefined();
    expect(next.results.map((r) => (r as { result: string }).result)).toEqual(["fresh"]);
    expect(userTexts(server.requests.at(-1)!).at(-1)).toBe("again");
  });

  test("maxTurns: a turn that needs more model calls ends as error_max_turns", async () => {
    const server = startServer([{ toolCalls: [{ id: "call_ls", name: "glob", arguments: { pattern: "*" } }] }]);
    const { run } = sdkRun(server);
    const { results } = await run("list", { maxTurns: 1 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ subtype: "error_max_turns", is_error: true });
    expect((results[0] as { errors: string[] }).errors[0]).toContain("max-turns");
    server.assertDone();
  });

  test("canUseTool: allow with updatedInput runs the changed call, deny keeps the file absent and is a permission denial", async () => {
    const server = startServer([
      { toolCalls: [{ id: "call_a", name: "write_file", arguments: { path: "allowed.txt", content: "from the model\n" } }] },
      { toolCalls: [{ id: "call_d", name: "write_file", arguments: { path: "denied.txt", content: "no\n" } }] },
      { text: "done", check: (r) => expect(String(r.body.messages.findLast((m) => m.role === "tool")!.content)).toContain("not in this directory") },
    ]);
    const { run, workspace } = sdkRun(server);
    const asked: { tool: string; input: Record<string, unknown>; toolUseID: string }[] = [];
    const { error, results } = await run("write two files", {
      canUseTool: async (tool, input, { toolUseID }) => {
        asked.push({ tool, input, toolUseID });
        return input.path === "allowed.txt"
          ? { behavior: "allow", updatedInput: { ...input, content: "changed by the host\n" } }
          : { behavior: "deny", message: "not in this directory" };
      },
    });
    expect(error).toBeUndefined();
    expect(asked.map((a) => [a.tool, a.input.path, a.toolUseID])).toEqual([
      ["write_file", "allowed.txt", "call_a"],
      ["write_file", "denied.txt", "call_d"],
    ]);
    expect(readFileSync(join(workspace, "allowed.txt"), "utf8")).toBe("changed by the host\n");
    expect(existsSync(join(workspace, "denied.txt"))).toBe(false);
    expect(results[0]).toMatchObject({ permission_denials: [{ tool_name: "write_file", tool_use_id: "call_d" }] });
    server.assertDone();
  });

  test("an SDK PreToolUse hook that denies: the call does not run, the file is absent, the model hears the reason", async () => {
    const server = startServer([
      { toolCalls: [{ id: "call_w", name: "write_file", arguments: { path: "blocked.txt", content: "x\n" } }] },
      { text: "ok", check: (r) => expect(String(r.body.messages.findLast((m) => m.role === "tool")!.content)).toContain("the host says no") },
    ]);
    const { run, workspace } = sdkRun(server);
    const seen: Record<string, unknown>[] = [];
    const { error } = await run("write it", {
      permissionMode: "acceptEdits",
      hooks: {
        PreToolUse: [
          {
            matcher: "Write",
            hooks: [
              async (input) => {
                seen.push(input as unknown as Record<string, unknown>);
                return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "the host says no" } };
              },
            ],
          },
        ],
      },
    });
    expect(error).toBeUndefined();
    expect(existsSync(join(workspace, "blocked.txt"))).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "write_file", tool_use_id: "call_w", tool_input: { path: "blocked.txt" } });
    server.assertDone();
  });

  test("includePartialMessages: each answer streams as Anthropic's events — message_start, blocks of thinking, tool input and text with their deltas, message_delta, message_stop", async () => {
    const server = startServer([
      { reasoning: "First look around.", toolCalls: [{ id: "call_ls", name: "glob", arguments: { pattern: "*.txt" } }] },
      { text: "streamed words arrive here" },
    ]);
    const { run } = sdkRun(server);
    const { error, messages } = await run("stream", { includePartialMessages: true });
    expect(error).toBeUndefined();
    const streamed = messages.filter((m) => m.type === "stream_event");
    // As the SDK's type declares them: the session, a uuid each, no parent (the Lead's own answer).
    const session = messages.find((m) => m.type === "system")!.session_id;
    for (const m of streamed) expect(m).toMatchObject({ session_id: session, uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), parent_tool_use_id: null });
    // One line per event, the deltas of a block joined into one entry.
    const shape: string[] = [];
    const joined: Record<string, string> = {};
    for (const { event } of streamed) {
      if (event.type === "content_block_delta") {
        const kind = event.delta.type;
        const piece = kind === "text_delta" ? event.delta.text : kind === "input_json_delta" ? event.delta.partial_json : kind === "thinking_delta" ? event.delta.thinking : "";
        const key = `${event.index} ${kind}`;
        if (joined[key] === undefined) shape.push(key);
        joined[key] = (joined[key] ?? "") + piece;
      } else if (event.type === "content_block_start") shape.push(`start ${event.index} ${event.content_block.type}`);
      else if (event.type === "content_block_stop") shape.push(`stop ${event.index}`);
      else if (event.type === "message_delta") shape.push(`message_delta ${event.delta.stop_reason}`);
      else shape.push(event.type);
    }
    expect(shape).toEqual([
      "message_start",
      "start 0 thinking",
      "0 thinking_delta",
      "stop 0",
      "start 1 tool_use",
      "1 input_json_delta",
      "stop 1",
      "message_delta tool_use",
      "message_stop",
      "message_start",
      "start 0 text",
      "0 text_delta",
      "stop 0",
      "message_delta end_turn",
      "message_stop",
    ]);
    expect(joined).toEqual({ "0 thinking_delta": "First look around.", "1 input_json_delta": '{"pattern":"*.txt"}', "0 text_delta": "streamed words arrive here" });
    const toolStart = streamed.find((m) => m.event.type === "content_block_start" && m.event.content_block.type === "tool_use")!;
    expect(toolStart.event).toMatchObject({ content_block: { type: "tool_use", id: "call_ls", name: "glob", input: {} } });
    // The whole assistant lines share their streamed message's id.
    const started = streamed.flatMap((m) => (m.event.type === "message_start" ? [m.event.message.id] : []));
    const assistants = messages.flatMap((m) => (m.type === "assistant" ? [m.message.id] : []));
    expect(assistants).toEqual(started);
    server.assertDone();
  });
});
