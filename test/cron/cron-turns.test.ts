import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { AgentRunner } from "../../src/runtime/agent-runner.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { scheduleCronTool } from "../../src/tools/schedule-cron.ts";
import { fakeRetryDeps } from "../model/helpers.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { MINUTE, cronWorld } from "./helpers.ts";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A cron world and the Lead's real runner with schedule_cron, against the scripted model server. */
function leadWorld(script: ScriptedReply[]) {
  const server = ScriptedModelServer.start(script);
  servers.push(server);
  const world = cronWorld();
  const workspace = join(world.stateDir, "..", "ws");
  mkdirSync(workspace, { recursive: true });
  const hooks = new ShellHooks({});
  const runner = new AgentRunner({
    identity: "lead",
    model: new OpenAIModelClient({ model: "m", apiKey: "k", baseUrl: server.url, timeoutMs: 5_000, retryDeps: fakeRetryDeps().deps }),
    tools: new ToolPipeline({ tools: [scheduleCronTool(world.cron)], policy: new PermissionPolicy({ mode: "plan" }), hooks }),
    hooks,
    history: openFileHistory(world.stateDir, "lead"),
    systemPrompt: "sys",
    workspace,
    maxTurns: 5,
    compaction: { thresholdChars: 1_000_000, largeToolResultChars: 100_000, results: new FileAttachments(world.stateDir) },
    clock: world.clock,
  });
  return { ...world, server, runner };
}

const lastUser = (body: { messages: Array<Record<string, unknown>> }) =>
  JSON.parse(String(body.messages.filter((m) => m.role === "user").at(-1)!.content));

describe("cron through the Lead", () => {
  test("schedule_cron from a Lead turn; the fired job is one event and one event turn, and its ack records the run", async () => {
    const w = leadWorld([
      { toolCalls: [{ name: "schedule_cron", arguments: { cron: "0 9 * * *", prompt: "summarise the night's CI", recurring: true, durable: true } }] },
      {
        text: "scheduled",
        check: (request) => {
          const result = String(request.body.messages.at(-1)!.content);
          expect(result).toMatch(/^scheduled cron job [0-9a-f-]{36} \(recurring, durable\); next run at 2026-01-01T09:00:00\.000Z$/);
        },
      },
    ]);
    await w.cron.start();
    const turn = await w.runner.run("every morning at 9, summarise the CI", { idempotencyKey: "user-1" });
    expect(turn.result).toBe("scheduled");
    const [job] = (await w.store.readDurable());
    expect(job).toMatchObject({ cron: "0 9 * * *", prompt: "summarise the night's CI", recurring: true, durable: true });

    await w.timer.advance(9 * 60 * MINUTE);
    expect(w.inbox.size).toBe(1);
    w.server.push({
      text: "CI was green",
      check: (request) => {
        expect(lastUser(request.body)).toEqual({
          agent_event: { id: `cron:${job!.id}@2026-01-01T09:00:00.000Z`, source: "cron", from: "cron", kind: "cron", sent_at: "2026-01-01T09:00:00.000Z" },
          content: `summarise the night's CI\n\n[scheduled job ${job!.id} (recurring, cron "0 9 * * *") fired for 2026-01-01T09:00:00.000Z]`,
        });
        // Acknowledged (the run recorded) before the model turn for it.
        expect(JSON.parse(readFileSync(join(w.stateDir, "cron.json"), "utf8")).jobs[0]).toMatchObject({ lastRunAtUtc: "2026-01-01T09:00:00.000Z", nextRunAtUtc: "2026-01-02T09:00:00.000Z" });
      },
    });
    const outcome = await w.runner.runEvents(w.inbox);
    expect(outcome).toMatchObject({ processed: 1, deferred: false, ackFailed: false });
    expect(outcome.turns.map((t) => t.result.result)).toEqual(["CI was green"]);
    // Nothing more: no second event for that run, and no second model call.
    await w.timer.advance(MINUTE);
    expect(await w.runner.runEvents(w.inbox)).toMatchObject({ processed: 0, turns: [] });
    w.server.assertDone();
    expect(w.server.requests).toHaveLength(3);
  });

  test("a run redelivered after a restart that already reached the history is acked, not answered again", async () => {
    const w = leadWorld([{ text: "done once" }]);
    await w.cron.schedule({ cron: "*/5 * * * *", prompt: "poll", recurring: false, durable: true });
    await w.cron.start();
    await w.timer.advance(5 * MINUTE);
    const entry = w.inbox.take()!;
    // The first process answered it, then died before the ack reached cron.json.
    w.inbox.publish({ event: entry.event, owner: { acknowledge: async () => {} } });
    await w.runner.runEvents(w.inbox);
    expect((await w.store.readDurable())).toHaveLength(1);
    // The restarted runtime fires the same run again; the runner acks it without a model call.
    const restarted = cronWorld(w.stateDir, w.clock);
    await restarted.cron.start();
    await restarted.timer.settled();
    expect(restarted.inbox.size).toBe(1);
    const outcome = await w.runner.runEvents(restarted.inbox);
    expect(outcome).toMatchObject({ processed: 1, turns: [] });
    expect((await w.store.readDurable())).toEqual([]);
    w.server.assertDone();
  });

  test("a bad expression is an error tool result naming the fix; nothing is scheduled", async () => {
    const w = leadWorld([
      { toolCalls: [{ name: "schedule_cron", arguments: { cron: "0 */5 * * * *", prompt: "p", recurring: true, durable: false } }] },
      {
        text: "sorry",
        check: (request) => {
          const message = request.body.messages.at(-1)!;
          expect(String(message.content)).toContain("6 fields given; a seconds field is not supported");
          expect(String(message.content)).toContain("use 5 fields: minute hour day-of-month month day-of-week");
        },
      },
    ]);
    await w.runner.run("every 5 seconds", { idempotencyKey: "user-1" });
    expect(w.cron.list()).toEqual([]);
    w.server.assertDone();
  });

  test("the input is strict: every field is required and nothing else is accepted", () => {
    const tool = scheduleCronTool(cronWorld().cron);
    expect(tool.effect).toBe("coordinate");
    expect(tool.input.safeParse({ cron: "* * * * *", prompt: "p", recurring: true }).success).toBe(false);
    expect(tool.input.safeParse({ cron: "* * * * *", prompt: "p", recurring: true, durable: true, at: 1 }).success).toBe(false);
    expect(tool.input.safeParse({ cron: "* * * * *", prompt: "p", recurring: true, durable: true }).success).toBe(true);
  });
});
