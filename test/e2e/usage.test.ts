import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedReply } from "../support/model-server.ts";
import { runAgent } from "./agent-binary.ts";
import { parseResult, scriptedServers } from "./run-fixture.ts";
import { FINAL_ANSWER, SEED_PROMPT, seedScript, teamSetup } from "./team-fixture.ts";

// Usage and cost of a whole team run on the compiled binary: every reply of the
// scripted server reports its own token counts, and the result must add up
// exactly what the server reported, per agent and in total.

const startServer = scriptedServers();
const MODEL = "priced-model";
const PRICE = { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5 };

function writePricing(workspace: string, extra: Record<string, unknown> = {}): void {
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ pricing: { [MODEL]: PRICE }, ...extra }));
}

/** The seed script with distinct counts on every reply (cached tokens on alice's). */
function countedScript(): ScriptedReply[] {
  return seedScript().map((reply, i) => ({
    ...reply,
    usage: {
      prompt_tokens: 1000 * (i + 1) + 7,
      completion_tokens: 10 * (i + 1) + 3,
      ...(reply.identity === "alice" ? { cached_tokens: 500 * (i + 1) } : {}),
    },
  }));
}

interface Sum {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  model_calls: number;
  tool_calls: number;
  cost_usd: number;
}

/** What the server reported, added up per agent, and what it costs at PRICE. */
function expectedUsage(script: ScriptedReply[]): Record<string, Sum> {
  const sums: Record<string, Sum> = {};
  for (const reply of script) {
    const usage = reply.usage!;
    const sum = (sums[reply.identity!] ??= { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0, cost_usd: 0 });
    sum.input_tokens += usage.prompt_tokens;
    sum.output_tokens += usage.completion_tokens;
    if (usage.cached_tokens !== undefined) sum.cached_input_tokens = (sum.cached_input_tokens ?? 0) + usage.cached_tokens;
    sum.model_calls += 1;
    sum.tool_calls += reply.toolCalls?.length ?? 0;
    const cached = usage.cached_tokens ?? 0;
    sum.cost_usd +=
      ((usage.prompt_tokens - cached) * PRICE.input_per_mtok + cached * PRICE.cached_input_per_mtok + usage.completion_tokens * PRICE.output_per_mtok) / 1e6;
  }
  return sums;
}

describe("usage and cost of a team run", () => {
  test("--output json: usage is the sum over the Lead and both teammates; usage_by_agent and total_cost_usd match the price table", async () => {
    const script = countedScript();
    const server = startServer(script);
    const { run, workspace } = teamSetup();
    writePricing(workspace);
    const result = await run([SEED_PROMPT, "--base-url", server.url, "--model", MODEL, "--permission-mode", "acceptEdits", "--output", "json"]);
    expect(result.code).toBe(0);
    server.assertDone();
    const json = parseResult(result.stdout);
    expect(json.result).toBe(FINAL_ANSWER);

    const expected = expectedUsage(script);
    expect(Object.keys(json.usage_by_agent).sort()).toEqual(["alice", "bob", "lead"]);
    for (const [agent, sum] of Object.entries(expected)) {
      const { cost_usd, ...counts } = sum;
      expect(json.usage_by_agent[agent]).toMatchObject(counts);
      expect(json.usage_by_agent[agent]!.cost_usd).toBeCloseTo(cost_usd, 6);
      // Each agent was busy in its turns for some measurable time.
      expect(json.usage_by_agent[agent]!.busy_ms).toBeGreaterThan(0);
    }
    // Only alice's answers reported cached tokens: the others have no such figure.
    expect(json.usage_by_agent.lead!.cached_input_tokens).toBeUndefined();
    const all = Object.values(expected);
    const total = (key: "input_tokens" | "output_tokens" | "model_calls" | "tool_calls") => all.reduce((n, sum) => n + sum[key], 0);
    expect(json.usage).toMatchObject({
      input_tokens: total("input_tokens"),
      output_tokens: total("output_tokens"),
      cached_input_tokens: expected.alice!.cached_input_tokens,
      model_calls: server.requests.length,
      tool_calls: total("tool_calls"),
    });
    // And the server's own record of what it answered says the same.
    expect(json.usage.input_tokens).toBe(script.reduce((n, reply) => n + reply.usage!.prompt_tokens, 0));
    expect(json.usage.busy_ms).toBe(Object.values(json.usage_by_agent).reduce((n, agent) => n + agent.busy_ms, 0));
    expect(json.total_cost_usd).toBeCloseTo(all.reduce((n, sum) => n + sum.cost_usd, 0), 6);
  });

  test("without a price for the model the cost is null with a note, and no agent has a cost", async () => {
    const script = countedScript();
    const server = startServer(script);
    const { run } = teamSetup();
    const result = await run([SEED_PROMPT, "--base-url", server.url, "--model", MODEL, "--permission-mode", "acceptEdits", "--output", "json"]);
    expect(result.code).toBe(0);
    const json = parseResult(result.stdout);
    expect(json.total_cost_usd).toBeNull();
    expect((json as { cost_note?: string }).cost_note).toContain("no known price");
    for (const agent of Object.values(json.usage_by_agent)) expect(agent.cost_usd).toBeUndefined();
    expect(json.usage.input_tokens).toBe(script.reduce((n, reply) => n + reply.usage!.prompt_tokens, 0));
  });
});

describe("--max-budget-usd", () => {
  test("stops new model calls once the session spent the budget: error_budget, exit 1, the teammate's task left for drain", async () => {
    // The Lead's first call costs $2 (1M input tokens at $2): past a $1 budget.
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "Say done." } }],
        usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
      },
    ]);
    const { run, drain, workspace } = teamSetup();
    writePricing(workspace);
    const args = ["--base-url", server.url, "--model", MODEL, "--output", "json"];
    const stopped = await run(["Have alice say done.", ...args, "--max-budget-usd", "1"]);
    expect(stopped.code).toBe(1);
    const json = parseResult(stopped.stdout);
    expect(json).toMatchObject({ subtype: "error_budget", is_error: true, total_cost_usd: 2 });
    expect(json.result).toContain("--max-budget-usd");
    expect(json.usage.model_calls).toBe(1);
    // Neither the Lead's second call nor alice's first was made.
    server.assertDone();

    // Budget in config too: the same session's spend counts, so drain with it refuses at once…
    writePricing(workspace, { maxBudgetUsd: 1 });
    const refused = await drain([...args]);
    expect(refused.code).toBe(1);
    expect(parseResult(refused.stdout)).toMatchObject({ subtype: "error_budget", usage: { model_calls: 0 } });
    server.assertDone();

    // …and a higher budget on the command line finishes what was left: alice's task and the Lead's turn.
    server.push(
      { identity: "alice", text: "done" },
      { identity: "lead", text: "alice is on it." },
      { identity: "lead", text: "alice said done." },
    );
    const finished = await drain([...args, "--max-budget-usd", "10"]);
    expect(finished.code).toBe(0);
    const drained = parseResult(finished.stdout);
    expect(drained).toMatchObject({ subtype: "success", result: "alice said done.", usage: { model_calls: 3 } });
    expect(Object.keys(drained.usage_by_agent).sort()).toEqual(["alice", "lead"]);
    server.assertDone();
  });

  test("a budget without a price for the model is a usage error before anything runs", async () => {
    const server = startServer([]);
    const { run } = teamSetup();
    const result = await run(["hi", "--base-url", server.url, "--model", MODEL, "--max-budget-usd", "1"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`model "${MODEL}" has an unknown price`);
    const bad = await run(["hi", "--base-url", server.url, "--max-budget-usd", "-3"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--max-budget-usd");
    server.assertDone();
  });
});

describe("agent sessions show", () => {
  test("the session's usage and cost over every run (run, then drain), per agent; --timeline in time order", async () => {
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "Say done." } }],
        usage: { prompt_tokens: 1_000_000, completion_tokens: 0 },
      },
    ]);
    const { run, drain, agent, workspace, stateDir } = teamSetup();
    writePricing(workspace);
    const args = ["--base-url", server.url, "--model", MODEL, "--output", "json"];
    const stopped = parseResult((await run(["Have alice say done.", ...args, "--max-budget-usd", "1"])).stdout);
    expect(stopped.subtype).toBe("error_budget");
    server.push(
      { identity: "alice", text: "done", usage: { prompt_tokens: 300, completion_tokens: 20, cached_tokens: 100 } },
      { identity: "lead", text: "alice is on it." },
      { identity: "lead", text: "alice said done." },
    );
    expect((await drain([...args, "--max-budget-usd", "10"])).code).toBe(0);
    server.assertDone();

    // Prices come from the config of the directory the command runs in.
    const shown = await runAgent(["sessions", "show", stopped.session_id!, "--json", "--state-dir", stateDir], { cwd: workspace });
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: "" });
    const json = JSON.parse(shown.stdout);
    expect(json.session_id).toBe(stopped.session_id);
    expect(json.usage).toMatchObject({ input_tokens: 1_000_000 + 300 + 10 + 10, output_tokens: 0 + 20 + 5 + 5, cached_input_tokens: 100, model_calls: 4, tool_calls: 1 });
    expect(json.usage_by_agent.lead).toMatchObject({ model_calls: 3, input_tokens: 1_000_020 });
    expect(json.usage_by_agent.alice).toMatchObject({ model_calls: 1, input_tokens: 300, cached_input_tokens: 100 });
    const aliceCost = (200 * PRICE.input_per_mtok + 100 * PRICE.cached_input_per_mtok + 20 * PRICE.output_per_mtok) / 1e6;
    expect(json.usage_by_agent.alice.cost_usd).toBeCloseTo(aliceCost, 6);
    expect(json.total_cost_usd).toBeCloseTo(2 + (20 * PRICE.input_per_mtok + 10 * PRICE.output_per_mtok) / 1e6 + aliceCost, 6);

    const text = await agent("sessions", "show", stopped.session_id!);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`session     ${stopped.session_id}`);
    expect(text.stdout).toMatch(/^lead +1000020 +- +10 +3 +1 +\d+\.\ds +unknown price\s*$/m);
    expect(text.stdout).toMatch(/^total +1000320 +100 +30 +4 +1 /m);

    const timeline = await agent("sessions", "show", stopped.session_id!, "--timeline");
    expect(timeline.code).toBe(0);
    const lines = timeline.stdout.trimEnd().split("\n");
    const times = lines.map((line) => line.split(" ")[0]!);
    expect([...times].sort()).toEqual(times);
    const at = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    expect(at(/ lead +user +Have alice say done\.$/)).toBe(1);
    expect(at(/ lead +tool_call +spawn_teammate /)).toBeGreaterThan(at(/ lead +model_call +model call: 1000000 in/));
    expect(at(/ alice +user +Say done\.$/)).toBeGreaterThan(at(/ lead +tool_call +spawn_teammate /));
    expect(at(/ alice +turn +turn finished \(success\): done$/)).toBeGreaterThan(at(/ alice +assistant +done$/));
    expect(at(/ lead +event +result from alice: done$/)).toBeGreaterThan(at(/ alice +turn +turn finished/));

    const missing = await agent("sessions", "show", "nope");
    expect(missing.code).toBe(6);
  });
});
