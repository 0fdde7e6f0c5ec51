import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BudgetExceededError } from "../../src/core/errors.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { AgentRunner } from "../../src/runtime/agent-runner.ts";
import { carriedUsageIn, openFileHistory } from "../../src/runtime/file-history.ts";
import { baseTools } from "../../src/tools/base-tools.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { MeteredModelClient } from "../../src/usage/metered-model.ts";
import { UsageLedger, readSessionUsage } from "../../src/usage/usage-ledger.ts";
import { fakeRetryDeps } from "../model/helpers.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";

// The metered client against the scripted server and a real runner, ledger and history on disk.

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const PRICING = { "test-model": { input_per_mtok: 1, output_per_mtok: 1 } };
const KEY = "00000000-0000-7000-8000-000000000001";

function setup(script: ScriptedReply[]) {
  const server = ScriptedModelServer.start(script);
  servers.push(server);
  const root = tempDir("metered-");
  const workspace = join(root, "ws");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  const exhausted: BudgetExceededError[] = [];
  const open = (maxBudgetUsd?: number) => {
    // As the runtime opens it: the histories' usage read first (src/app/runtime-stores.ts).
    const ledger = UsageLedger.open(stateDir, { carried: carriedUsageIn(stateDir) });
    const model = new MeteredModelClient(
      new OpenAIModelClient({ model: "test-model", apiKey: "sk-test", baseUrl: server.url, timeoutMs: 5_000, retryDeps: fakeRetryDeps().deps }),
      { ledger, pricing: PRICING, ...(maxBudgetUsd !== undefined ? { maxBudgetUsd } : {}), onBudgetExhausted: (error) => exhausted.push(error) },
    );
    const hooks = new ShellHooks({});
    const history = openFileHistory(stateDir, "lead");
    history.carryUsage(ledger.carrierOf("lead"));
    const runner = new AgentRunner({
      identity: "lead",
      model,
      tools: new ToolPipeline({ tools: baseTools(), policy: new PermissionPolicy({ mode: "acceptEdits" }), hooks }),
      hooks,
      history,
      systemPrompt: "You are a test agent.",
      workspace,
      maxTurns: 10,
      compaction: { thresholdChars: 1_000_000, largeToolResultChars: 100_000, results: new FileAttachments(stateDir) },
      onTurnEnd: ({ key, result }) => ledger.recordTurn({ agent: "lead", key, subtype: result.subtype, durationMs: result.durationMs }),
    });
    return {
      ledger,
      model,
      runner,
      history,
      close: async () => {
        runner.close();
        await ledger.close();
      },
    };
  };
  return { server, stateDir, exhausted, open };
}

describe("MeteredModelClient", () => {
  test("every answered call is in the ledger, a subagent's billed to its parent; the figures survive a reopen", async () => {
    const s = setup([{ text: "one", usage: { prompt_tokens: 100, completion_tokens: 10 } }, { text: "two", usage: { prompt_tokens: 50, completion_tokens: 5, cached_tokens: 20 } }]);
    const { model, ledger, close } = s.open();
    await model.complete({ identity: "lead", messages: [{ role: "user", content: "a" }], tools: [] });
    await model.complete({ identity: "lead/task-1", messages: [{ role: "user", content: "b" }], tools: [] });
    const { lead } = ledger.run(PRICING).byAgent;
    expect({ ...lead, apiMs: 0 }).toEqual({ inputTokens: 150, outputTokens: 15, cachedInputTokens: 20, modelCalls: 2, toolCalls: 0, busyMs: 0, apiMs: 0, costUsd: 0.000165 });
    expect(lead!.apiMs).toBeGreaterThanOrEqual(0);
    await close();
    const again = UsageLedger.open(s.stateDir);
    expect(again.run(PRICING).total.modelCalls).toBe(0);
    expect(again.session(PRICING).total).toMatchObject({ inputTokens: 150, modelCalls: 2 });
    expect(readSessionUsage(s.stateDir, {}, []).total.costUsd).toBeUndefined();
    await again.close();
    s.server.assertDone();
  });

  test("the budget refuses the next call once spent; the turn stays open and resumes with a larger budget", async () => {
    const s = setup([
      // $1.10: past a $1 budget, so the call after it is refused.
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "missing.txt" } }], usage: { prompt_tokens: 1_100_000, completion_tokens: 0 } },
    ]);
    const first = s.open(1);
    const stopped = await first.runner.run("go", { idempotencyKey: KEY });
    expect(stopped.subtype).toBe("error_budget");
    expect(stopped.result).toContain("--max-budget-usd");
    expect(s.exhausted).toHaveLength(1);
    expect(s.exhausted[0]!.spentUsd).toBeCloseTo(1.1, 9);
    // Neither finished nor interrupted: the next runtime resumes it.
    expect(first.history.turnStatus(KEY)).toBe("started");
    await first.close();
    s.server.assertDone();

    s.server.push({ text: "done" });
    const second = s.open(5);
    const resumed = await second.runner.run("go", { idempotencyKey: KEY });
    expect(resumed).toMatchObject({ subtype: "success", result: "done" });
    expect(second.history.turnStatus(KEY)).toBe("finished");
    expect(second.ledger.session(PRICING).total).toMatchObject({ modelCalls: 2, toolCalls: 1 });
    await second.close();
    s.server.assertDone();
  });

  test("usage.jsonl lost to an OS crash: its calls are re-derived from the history and the budget still counts them", async () => {
    const s = setup([
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "missing.txt" } }], usage: { prompt_tokens: 600_000, completion_tokens: 0 } },
      { toolCalls: [{ id: "r2", name: "read_file", arguments: { path: "missing.txt" } }], usage: { prompt_tokens: 500_000, completion_tokens: 0 } },
    ]);
    const first = s.open(1);
    expect((await first.runner.run("go", { idempotencyKey: KEY })).subtype).toBe("error_budget");
    const written = readFileSync(join(s.stateDir, "usage.jsonl"), "utf8");
    await first.close();
    // usage.jsonl is never fsynced while agents work: an OS crash may take any of it.
    rmSync(join(s.stateDir, "usage.jsonl"));

    const second = s.open(1);
    // No reply is scripted: a call made here fails the test.
    expect((await second.runner.run("go", { idempotencyKey: KEY })).subtype).toBe("error_budget");
    expect(second.ledger.spentUsd(PRICING)).toBeCloseTo(1.1, 9);
    await second.close();
    const calls = (text: string) =>
      text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { type: string; id: string; input_tokens: number })
        .filter((record) => record.type === "model_call");
    // The same records, ids and all, as the first process wrote them.
    expect(calls(readFileSync(join(s.stateDir, "usage.jsonl"), "utf8"))).toEqual(calls(written));
    expect(calls(written).map((call) => call.input_tokens)).toEqual([600_000, 500_000]);
    s.server.assertDone();
  });
});
