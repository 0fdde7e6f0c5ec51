import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { HookConfig, HookEvent } from "../../src/config/config.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { AgentRunner } from "../../src/runtime/agent-runner.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import { clearSecrets, registerSecret } from "../../src/security/redact.ts";
import { baseTools } from "../../src/tools/base-tools.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { fakeRetryDeps } from "../model/helpers.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { waitUntil, within } from "../support/deadline.ts";
import { tempDir } from "../support/temp-dir.ts";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  clearSecrets();
  for (const server of servers.splice(0)) await server.close();
});

const key = (n = 1) => `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`;

/** A teammate's runner (or the Lead's) against the scripted server: real client, tools, hooks and history file. */
function teammate(script: ScriptedReply[], hooks: Partial<Record<HookEvent, HookConfig[]>> = {}, identity = "alice") {
  const server = ScriptedModelServer.start(script);
  servers.push(server);
  const root = tempDir("send-ahead-");
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  const events: RunEvent[] = [];
  const shellHooks = new ShellHooks(hooks);
  const runner = new AgentRunner({
    identity,
    model: new OpenAIModelClient({ model: "test-model", apiKey: "sk-test", baseUrl: server.url, timeoutMs: 5_000, retryDeps: fakeRetryDeps().deps }),
    tools: new ToolPipeline({ tools: baseTools(), policy: new PermissionPolicy({ mode: "acceptEdits" }), hooks: shellHooks }),
    hooks: shellHooks,
    history: openFileHistory(stateDir, identity),
    systemPrompt: "You are a teammate.",
    workspace,
    maxTurns: 10,
    compaction: { thresholdChars: 1_000_000, largeToolResultChars: 100_000, results: new FileAttachments(stateDir) },
    observer: (event) => events.push(event),
  });
  return { server, runner, events, workspace, stateDir };
}

/** Until the server has `count` requests. */
async function requestsReach(server: ScriptedModelServer, count: number): Promise<void> {
  await waitUntil(() => server.requests.length >= count, () => `${count} request(s); the server has ${server.requests.length}`);
}

/** A reply that is never answered: the request ends only when the client closes it. */
const never = () => new Promise<never>(() => {});

describe("a model call sent ahead", () => {
  test("goes out before the turn runs, and the turn takes its answer: one request, the answer streamed to the turn", async () => {
    const { server, runner, events } = teammate([{ identity: "alice", text: "the answer, streamed in pieces" }]);
    runner.sendAhead("do the task");
    await requestsReach(server, 1);
    // Sent, and answered, before any turn asked for it.
    expect(server.requests).toHaveLength(1);
    const runStarted = Date.now();
    // Received by the time this looks (the same millisecond on a fast machine).
    expect(server.requests[0]!.at).toBeLessThanOrEqual(runStarted);
    const result = await runner.run("do the task", { idempotencyKey: key(), promptKept: true });
    expect(result).toMatchObject({ subtype: "success", result: "the answer, streamed in pieces", turns: 1 });
    // Still one request: the turn made none of its own.
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: "user", content: "do the task" });
    // What streamed in before the turn took the call is told to it, as a call of its own would.
    const deltas = events.filter((event) => event.type === "assistant_delta").map((event) => (event as { text: string }).text);
    expect(deltas.join("")).toBe("the answer, streamed in pieces");
    expect(events.filter((event) => event.type === "model_request")).toHaveLength(1);
    expect(server.problems).toEqual([]);
  });

  test("a turn that asks anything else stops it and makes its own request", async () => {
    const { server, runner } = teammate([
      { identity: "alice", text: "answer to the old task", gate: never() },
      { identity: "alice", text: "answer to the new task" },
    ]);
    runner.sendAhead("the old task");
    await requestsReach(server, 1);
    const result = await runner.run("a different task", { idempotencyKey: key(), promptKept: true });
    expect(result.result).toBe("answer to the new task");
    expect(server.requests.map((request) => request.body.messages.at(-1)?.content)).toEqual(["the old task", "a different task"]);
    // The call it did not take was closed, not left waiting for an answer that never comes.
    await within(server.requests[0]!.disconnected!, "the call sent ahead for the old task to be aborted");
    // The history holds only the turn's own request and answer.
    expect(runner.history.messages.map((message) => message.content)).toEqual(["a different task", "answer to the new task"]);
  });

  test("a registered secret in the task is masked in the request sent ahead, as in the history, and the turn still takes it", async () => {
    const secret = "sk-the-configured-key-0123456789";
    registerSecret(secret);
    const { server, runner } = teammate([{ identity: "alice", text: "done" }]);
    runner.sendAhead(`use the key ${secret}`);
    await requestsReach(server, 1);
    const result = await runner.run(`use the key ${secret}`, { idempotencyKey: key(), promptKept: true });
    expect(result.result).toBe("done");
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain(secret);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: "user", content: "use the key [REDACTED]" });
    expect(runner.history.messages[0]).toEqual({ role: "user", content: "use the key [REDACTED]" });
  });

  test("is not sent when the turn's request cannot be known: a UserPromptSubmit hook, a history already started", async () => {
    const hooked = teammate([{ identity: "alice", text: "hooked" }], { UserPromptSubmit: [{ command: "echo extra context" }] });
    // Decided at once: no call is started, so none can arrive later.
    expect(hooked.runner.sendAhead("task")).toBe(false);
    expect(hooked.server.requests).toHaveLength(0);
    expect((await hooked.runner.run("task", { idempotencyKey: key(), promptKept: true })).result).toBe("hooked");
    expect(hooked.server.requests).toHaveLength(1);

    const started = teammate([{ identity: "alice", text: "first" }, { identity: "alice", text: "second" }]);
    await started.runner.run("first task", { idempotencyKey: key(1) });
    expect(started.runner.sendAhead("second task")).toBe(false);
    expect(started.server.requests).toHaveLength(1);
    expect((await started.runner.run("second task", { idempotencyKey: key(2) })).result).toBe("second");
    expect(started.server.requests).toHaveLength(2);
  });

  test("the Lead's first prompt of a new session goes out before its turn writes anything, and the turn takes the answer", async () => {
    const { server, runner, stateDir } = teammate([{ identity: "lead", text: "hello back" }], {}, "lead");
    runner.sendAhead("hello");
    await requestsReach(server, 1);
    expect(server.requests).toHaveLength(1);
    // Nothing of the turn is on disk yet: the request did not wait for its history.
    expect(existsSync(join(stateDir, "agents", "lead.jsonl")) ? readFileSync(join(stateDir, "agents", "lead.jsonl"), "utf8") : "").toBe("");
    const result = await runner.run("hello", { idempotencyKey: key() });
    expect(result).toMatchObject({ subtype: "success", result: "hello back", turns: 1 });
    expect(server.requests).toHaveLength(1);
    expect(runner.history.messages.map((message) => message.content)).toEqual(["hello", "hello back"]);
    expect(server.problems).toEqual([]);
  });

  test("not for the Lead when a SessionStart hook may add to its first prompt, nor after its first turn", async () => {
    const hooked = teammate([{ identity: "lead", text: "with context" }], { SessionStart: [{ command: "echo from the session hook" }] }, "lead");
    expect(hooked.runner.sendAhead("hello")).toBe(false);
    expect(hooked.server.requests).toHaveLength(0);
    expect((await hooked.runner.run("hello", { idempotencyKey: key() })).result).toBe("with context");
    expect(hooked.server.requests).toHaveLength(1);
    expect(String(hooked.server.requests[0]!.body.messages.at(-1)?.content)).toContain("from the session hook");

    const plain = teammate([{ identity: "lead", text: "first" }, { identity: "lead", text: "second" }], {}, "lead");
    await plain.runner.run("first prompt", { idempotencyKey: key(1) });
    expect(plain.runner.sendAhead("second prompt")).toBe(false);
    expect(plain.server.requests).toHaveLength(1);
    expect((await plain.runner.run("second prompt", { idempotencyKey: key(2) })).result).toBe("second");
    expect(plain.server.requests).toHaveLength(2);
  });

  test("a runner closed before its turn stops the call; nothing is left waiting", async () => {
    // The server never answers: the request can only end by the client closing it.
    const { server, runner } = teammate([{ identity: "alice", text: "never taken", gate: never() }]);
    expect(runner.sendAhead("task")).toBe(true);
    await requestsReach(server, 1);
    runner.close();
    await within(server.requests[0]!.disconnected!, "the call sent ahead to be aborted when its runner closed");
    expect(server.requests).toHaveLength(1);
  });
});
