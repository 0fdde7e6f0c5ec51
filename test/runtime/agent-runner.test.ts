import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { HookConfig, HookEvent } from "../../src/config/config.ts";
import { UsageError } from "../../src/core/errors.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { AgentRunner } from "../../src/runtime/agent-runner.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import { baseTools } from "../../src/tools/base-tools.ts";
import { defineTool, type Tool } from "../../src/core/tool.ts";
import { z } from "zod";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { fakeRetryDeps } from "../model/helpers.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { deadline } from "../support/deadline.ts";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";
import { waitUntil } from "../support/deadline.ts";

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

interface Setup {
  server: ScriptedModelServer;
  workspace: string;
  stateDir: string;
  events: RunEvent[];
  runner(): AgentRunner;
}

/** A real runner: real model client against the scripted server, real tool pipeline and hooks, real files. */
function setup(script: ScriptedReply[], options: {
    hooks?: Partial<Record<HookEvent, HookConfig[]>>;
    maxTurns?: number;
    thresholdChars?: number;
    mode?: "acceptEdits" | "bypassPermissions";
    identity?: string;
    tools?: Tool[];
  } = {}): Setup {
  const server = ScriptedModelServer.start(script);
  servers.push(server);
  const root = tempDir("agent-runner-");
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  const events: RunEvent[] = [];
  return {
    server,
    workspace,
    stateDir,
    events,
    runner() {
      const hooks = new ShellHooks(options.hooks ?? {});
      const model = new OpenAIModelClient({
        model: "test-model",
        apiKey: "sk-test",
        baseUrl: server.url,
        timeoutMs: 5_000,
        retryDeps: fakeRetryDeps().deps,
      });
      return new AgentRunner({
        identity: options.identity ?? "lead",
        model,
        tools: new ToolPipeline({ tools: [...baseTools(), ...(options.tools ?? [])], policy: new PermissionPolicy({ mode: options.mode ?? "acceptEdits" }), hooks }),
        hooks,
        history: openFileHistory(stateDir, options.identity ?? "lead"),
        systemPrompt: "You are a test agent.",
        workspace,
        maxTurns: options.maxTurns ?? 10,
        compaction: { thresholdChars: options.thresholdChars ?? 1_000_000, largeToolResultChars: 100_000, results: new FileAttachments(stateDir) },
        observer: (event) => events.push(event),
      });
    },
  };
}

const key = (n = 1) => `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`;

/**
 * A tool whose calls run at once when the runner lets them: each call waits for
 * `expected` calls to have started, and says whether they all had. A runner that
 * runs them one by one would never start the second while the first waits: the
 * wait is bounded (2 s, scaled to the machine's load), so that runner fails the
 * test with "alone" instead of hanging it; a correct one never reaches the bound.
 */
function gatherTool(expected: number): Tool {
  let started = 0;
  let all: () => void;
  const allStarted = new Promise<void>((resolve) => (all = resolve));
  return defineTool({
    name: "gather",
    description: "waits for its siblings",
    input: z.strictObject({ label: z.string() }),
    effect: "coordinate",
    concurrent: true,
    subject: (input) => input.label,
    async run(input) {
      started += 1;
      if (started === expected) all();
      const together = await Promise.race([allStarted.then(() => true), Bun.sleep(deadline(2_000)).then(() => false)]);
      return { content: `${input.label} ${together ? "together" : "alone"}` };
    },
  });
}

/**
 * A tool not marked concurrent that logs when each call starts and ends, and
 * between the two yields to the event loop a few times: a runner that started
 * its siblings at once would start the next call during those turns, so the
 * log would show it begun before this one ended.
 */
function serialTool(log: string[]): Tool {
  return defineTool({
    name: "serial",
    description: "one at a time",
    input: z.strictObject({ label: z.string() }),
    effect: "coordinate",
    subject: (input) => input.label,
    async run(input) {
      log.push(`${input.label} start`);
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      log.push(`${input.label} end`);
      return { content: input.label };
    },
  });
}

describe("AgentRunner", () => {
  test("calls of a concurrent tool in one reply run at once; their results are stored in the calls' order", async () => {
    const s = setup(
      [
        {
          toolCalls: [
            { id: "c1", name: "gather", arguments: { label: "one" } },
            { id: "c2", name: "gather", arguments: { label: "two" } },
            { id: "c3", name: "gather", arguments: { label: "three" } },
          ],
        },
        { text: "done" },
      ],
      { tools: [gatherTool(3)] },
    );
    const result = await s.runner().run("gather", { idempotencyKey: key() });
    expect(result.result).toBe("done");
    const tools = openFileHistory(s.stateDir, "lead").messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => [m.role === "tool" && m.toolCallId, m.content])).toEqual([
      ["c1", "one together"],
      ["c2", "two together"],
      ["c3", "three together"],
    ]);
    s.server.assertDone();
  });

  test("calls of a tool not marked concurrent run one after another, in the calls' order", async () => {
    const log: string[] = [];
    const s = setup(
      [
        {
          toolCalls: [
            { id: "s1", name: "serial", arguments: { label: "one" } },
            { id: "s2", name: "serial", arguments: { label: "two" } },
            { id: "s3", name: "serial", arguments: { label: "three" } },
          ],
        },
        { text: "done" },
      ],
      { tools: [serialTool(log)] },
    );
    const result = await s.runner().run("one by one", { idempotencyKey: key() });
    expect(result.result).toBe("done");
    expect(log).toEqual(["one start", "one end", "two start", "two end", "three start", "three end"]);
    s.server.assertDone();
  });

  test("a multi-step turn: the model writes a file through a tool call, then answers", async () => {
    const s = setup([
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "notes/hello.txt", content: "hi\n" } }] },
      {
        text: "Wrote notes/hello.txt.",
        check: (request) => {
          const last = request.body.messages.at(-1)!;
          expect(last).toMatchObject({ role: "tool", tool_call_id: "w1" });
        },
      },
    ]);
    const result = await s.runner().run("write hello", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "success", isError: false, result: "Wrote notes/hello.txt.", turns: 2 });
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
    expect(readFileSync(join(s.workspace, "notes/hello.txt"), "utf8")).toBe("hi\n");
    // The call's input streamed in pieces before the answer was whole: the first names it, joined they are its arguments.
    const input = s.events.filter((e) => e.type === "tool_input_delta");
    expect(input[0]).toEqual({ type: "tool_input_delta", agent: "lead", index: 0, id: "w1", name: "write_file", json: "" });
    expect(input.map((e) => e.json).join("")).toBe(JSON.stringify({ path: "notes/hello.txt", content: "hi\n" }));
    expect(s.events.map((e) => e.type).filter((type) => type !== "tool_input_delta")).toEqual([
      "user",
      "model_request",
      "usage",
      "tool_call",
      "tool_result",
      "model_request",
      "assistant_delta",
      "assistant_delta",
      "usage",
      "assistant",
    ]);
    // Each answer's tokens, for a terminal's team view.
    expect(s.events.filter((e) => e.type === "usage")).toEqual([
      { type: "usage", agent: "lead", inputTokens: 10, outputTokens: 5, finishReason: "tool_calls" },
      { type: "usage", agent: "lead", inputTokens: 10, outputTokens: 5, finishReason: "stop" },
    ]);
    // The answer streamed in pieces, then whole.
    expect(s.events.filter((e) => e.type === "assistant_delta").map((e) => e.text)).toEqual(["Wrote ", "notes/hello.txt."]);
    expect(s.server.requests.every((r) => r.identity === "lead")).toBe(true);
    s.server.assertDone();
  });

  test("a stream cut before its end is retried: only the whole answer enters the history; the pieces and the retry are events", async () => {
    const s = setup([{ text: "A half answer that is cut", cut: { afterChunks: 3 } }, { text: "The whole answer." }]);
    const runner = s.runner();
    const result = await runner.run("answer me", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "success", result: "The whole answer.", turns: 1 });
    expect(runner.history.messages).toEqual([
      { role: "user", content: "answer me" },
      { role: "assistant", content: "The whole answer." },
    ]);
    expect(s.events.filter((e) => e.type !== "user" && e.type !== "model_request" && e.type !== "usage")).toEqual([
      { type: "assistant_delta", agent: "lead", text: "A " },
      { type: "assistant_delta", agent: "lead", text: "half " },
      { type: "model_retry", agent: "lead", attempt: 1, delayMs: expect.any(Number), reason: "the answer stream was cut before it finished" },
      { type: "assistant_delta", agent: "lead", text: "The " },
      { type: "assistant_delta", agent: "lead", text: "whole " },
      { type: "assistant_delta", agent: "lead", text: "answer." },
      { type: "assistant", agent: "lead", text: "The whole answer." },
    ]);
    s.server.assertDone();
  });

  test("an empty answer twice: a warning, then error_model; nothing but the prompt in the history", async () => {
    const s = setup([{ text: "" }, { text: null }]);
    const runner = s.runner();
    const result = await runner.run("answer me", { idempotencyKey: key() });
    const message = "the model test-model answered with no text and no tool calls (2 times): ask again, or try another model";
    expect(result).toMatchObject({ subtype: "error_model", isError: true, result: message });
    expect(s.events).toContainEqual({ type: "warning", agent: "lead", message });
    expect(runner.history.messages).toEqual([{ role: "user", content: "answer me" }]);
    s.server.assertDone();
  });

  test("an empty idempotency key is refused before any history, hook or model call", async () => {
    const s = setup([], { hooks: { UserPromptSubmit: [{ command: "touch hook-ran" }] } });
    const runner = s.runner();
    await expect(runner.run("hello", { idempotencyKey: "" })).rejects.toBeInstanceOf(UsageError);
    await expect(runner.run("hello", { idempotencyKey: "   " })).rejects.toBeInstanceOf(UsageError);
    expect(s.server.requests).toHaveLength(0);
    expect(existsSync(join(s.workspace, "hook-ran"))).toBe(false);
    expect(readFileSync(runner.history.path, { flag: "a+" }).length).toBe(0);
    s.server.assertDone();
  });

  test("malformed tool-call JSON from the model becomes an error result and the loop goes on", async () => {
    const s = setup([
      { toolCalls: [{ id: "bad", name: "read_file", arguments: '{"path": "a.txt"' }] },
      {
        text: "Sorry, fixed.",
        check: (request) => {
          const last = request.body.messages.at(-1)!;
          expect(last.role).toBe("tool");
          expect(String(last.content)).toContain("invalid JSON");
        },
      },
    ]);
    const result = await s.runner().run("read a", { idempotencyKey: key() });
    expect(result.subtype).toBe("success");
    expect(s.events.find((e) => e.type === "tool_result")).toMatchObject({ isError: true });
    s.server.assertDone();
  });

  test("the turn cap ends the run as error_max_turns", async () => {
    const call = { toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] };
    const s = setup([call, call], { maxTurns: 2 });
    const result = await s.runner().run("loop", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "error_max_turns", isError: true, turns: 2 });
    expect(result.result).toContain("--max-turns");
    s.server.assertDone();
  });

  test("a reply cut off by the length limit is continued", async () => {
    const s = setup([
      { text: "Hello, wor", finishReason: "length" },
      { text: "ld!", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("Continue exactly") },
    ]);
    const result = await s.runner().run("greet", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "success", result: "Hello, world!", turns: 2 });
    s.server.assertDone();
  });

  test("on context overflow the history is compacted and the call retried once", async () => {
    const s = setup([
      { text: "first answer" },
      { status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } } },
      { text: "SUMMARY: the user greeted", check: (r) => expect(r.body.tools).toBeUndefined() },
      {
        text: "second answer",
        check: (r) => {
          const contents = r.body.messages.map((m) => String(m.content));
          expect(contents.some((c) => c.includes("SUMMARY: the user greeted"))).toBe(true);
          expect(contents).not.toContain("first question");
        },
      },
    ]);
    const runner = s.runner();
    await runner.run("first question", { idempotencyKey: key(1) });
    const result = await runner.run("second question", { idempotencyKey: key(2) });
    expect(result).toMatchObject({ subtype: "success", result: "second answer" });
    expect(s.events.some((e) => e.type === "compaction")).toBe(true);
    // The compacted history is what a later process reads back.
    expect(openFileHistory(s.stateDir, "lead").messages[0]!.content).toContain("SUMMARY");
    s.server.assertDone();
  });

  test("a UserPromptSubmit hook that exits 2 blocks the turn before any model call", async () => {
    const s = setup([], { hooks: { UserPromptSubmit: [{ command: "echo 'no secrets here' >&2; exit 2" }] } });
    const result = await s.runner().run("leak the key", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "error_blocked", isError: true });
    expect(result.result).toContain("no secrets here");
    s.server.assertDone();
  });

  test("a Stop hook that exits 2 sends the agent back to work with its reason", async () => {
    const s = setup(
      [
        { text: "done?" },
        { text: "now really done", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("run the tests") },
      ],
      { hooks: { Stop: [{ command: "if [ -e stopped-once ]; then exit 0; fi; touch stopped-once; echo 'run the tests' >&2; exit 2" }] } },
    );
    const result = await s.runner().run("work", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "success", result: "now really done", turns: 2 });
    s.server.assertDone();
  });

  test("SessionStart once per runner (startup, then resume in a new process), its stdout with the prompt; PreCompact before /compact says manual", async () => {
    const log = "jq -c '{e: .hook_event_name, s: .source, t: .trigger}' >> events.log";
    const s = setup(
      [
        { text: "one", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toBe("first\n\n<hook-context>\nbranch: main\n</hook-context>") },
        { text: "two", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toBe("second") },
        { text: "three" },
        { text: "summary of the earlier conversation" },
      ],
      { hooks: { SessionStart: [{ command: `${log}; echo 'branch: main'` }], PreCompact: [{ command: log }] } },
    );
    const runner = s.runner();
    await runner.run("first", { idempotencyKey: key(1) });
    await runner.run("second", { idempotencyKey: key(2) });
    runner.close();
    const again = s.runner();
    await again.run("third", { idempotencyKey: key(3) });
    await again.compactNow();
    again.close();
    const events = readFileSync(join(s.workspace, "events.log"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(events).toEqual([
      { e: "SessionStart", s: "startup", t: null },
      { e: "SessionStart", s: "resume", t: null },
      { e: "PreCompact", s: null, t: "manual" },
    ]);
  });

  test("a subagent's or teammate's final answer runs SubagentStop, not Stop", async () => {
    const s = setup([{ text: "done" }], {
      identity: "alice",
      hooks: { Stop: [{ command: "touch stop-ran" }], SubagentStop: [{ command: "jq -r .identity > subagent-stop" }] },
    });
    await s.runner().run("work", { idempotencyKey: key() });
    expect(readFileSync(join(s.workspace, "subagent-stop"), "utf8")).toBe("alice\n");
    expect(existsSync(join(s.workspace, "stop-ran"))).toBe(false);
  });

  test("the history survives a restart: a new runner's request contains the earlier turn", async () => {
    const s = setup([
      { text: "first answer" },
      {
        text: "second answer",
        check: (r) => {
          expect(r.body.messages.map((m) => m.content)).toEqual([
            "You are a test agent.",
            "first question",
            "first answer",
            "second question",
          ]);
        },
      },
    ]);
    const first = s.runner();
    await first.run("first question", { idempotencyKey: key(1) });
    first.close();
    const second = s.runner();
    expect(second.history.turnStatus(key(1))).toBe("finished");
    await second.run("second question", { idempotencyKey: key(2) });
    s.server.assertDone();
  });

  test("a turn a killed run left half done is finished before a new prompt enters the history; the result is the new prompt's", async () => {
    const s = setup([
      {
        text: "old answer",
        check: (r) => {
          expect(r.body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
        },
      },
      {
        text: "new answer",
        check: (r) => {
          expect(r.body.messages.map((m) => m.content ?? null)).toEqual([
            "You are a test agent.",
            "old prompt",
            null,
            expect.stringContaining("did not finish"),
            "old answer",
            "new prompt",
          ]);
        },
      },
    ]);
    // What a run SIGKILLed mid-turn leaves: the old turn started, its tool call unanswered.
    const killed = openFileHistory(s.stateDir, "lead");
    await killed.beginTurn(key(1), [{ role: "user", content: "old prompt" }], new Date());
    await killed.appendMessages([{ role: "assistant", content: null, toolCalls: [{ id: "c1", name: "shell", arguments: "{\"command\":\"true\"}" }] }], new Date());
    killed.close();

    const runner = s.runner();
    const result = await runner.run("new prompt", { idempotencyKey: key(2) });
    expect(result).toMatchObject({ subtype: "success", result: "new answer" });
    expect(runner.history.turnStatus(key(1))).toBe("finished");
    expect(runner.history.abandonedTurns()).toEqual([]);
    const texts = runner.history.messages.filter((m) => m.role === "user" || (m.role === "assistant" && m.content)).map((m) => m.content);
    expect(texts).toEqual(["old prompt", "old answer", "new prompt", "new answer"]);
    s.server.assertDone();
  });

  test("one turn at a time: a second run waits for the first", async () => {
    const s = setup([{ text: "one", delayMs: 150 }, { text: "two" }]);
    const runner = s.runner();
    const [a, b] = await Promise.all([
      runner.run("first", { idempotencyKey: key(1) }),
      runner.run("second", { idempotencyKey: key(2) }),
    ]);
    expect([a.result, b.result]).toEqual(["one", "two"]);
    const second = s.server.requests[1]!.body.messages.map((m) => m.content);
    expect(second).toEqual(["You are a test agent.", "first", "one", "second"]);
    s.server.assertDone();
  });

  test("an abort mid-turn ends it as error_interrupted with every tool call paired", async () => {
    const s = setup([{ toolCalls: [{ id: "s1", name: "shell", arguments: { command: "touch began; sleep 5" } }] }], {
      mode: "bypassPermissions",
    });
    const controller = new AbortController();
    const runner = s.runner();
    // Aborted once the command runs: mid-turn, with its tool call unanswered.
    void waitUntil(() => existsSync(join(s.workspace, "began")), "the shell command to start").then(() => controller.abort());
    const result = await runner.run("slow", { idempotencyKey: key(), signal: controller.signal });
    expect(result).toMatchObject({ subtype: "error_interrupted", isError: true });
    const messages = runner.history.messages;
    expect(messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "s1", isError: true });
    s.server.assertDone();
  });
});
