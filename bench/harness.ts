/**
 * Harness benchmark: what the runtime adds to a tool-calling step, in-process
 * through the real runtime (composition root, tool pipeline, durable history,
 * usage ledger) against the scripted model server on 127.0.0.1 at 0 ms model
 * delay.
 *
 * A turn is STEPS tool-call steps (each one read_file of a small file) and the
 * final answer. Its floor is a bare loop in the same process doing what the
 * step cannot avoid: the same HTTP requests (the very bodies the agent sent,
 * streamed answers read to the end), the same file reads and one fsynced
 * history append of the same records per step (stricter than the runtime can
 * be: it fsyncs the model's call before running the tool, then the result —
 * two a step, see docs/performance.md). Both are timed alternately in
 * this one run (the machine is shared; each sees the load of its moment), and
 * the ratio is taken from the fastest round of each:
 *
 *  - `stepRatio`: a fresh history — goal <= 1.5;
 *  - `stepRatio2000`: a history of 2 000 turns (pre-built, ~2.5 MB of request)
 *    — goal <= 2;
 *  - `anthropicEncodeMs2000` / `anthropicStringifyMs2000` and the same for
 *    `responses`: the native clients' bodies at 2 000 turns, encoded a step at a
 *    time against built and stringified whole (encoding only).
 *
 * The last line is one JSON object with the figures.
 */
import { appendFileSync, closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLead, type LeadRuntime } from "../src/app/lead.ts";
import { loadSettings } from "../src/config/load.ts";
import { AnthropicBodyEncoder } from "../src/model/anthropic/anthropic-body.ts";
import { type AnthropicRequestOptions, toAnthropicRequest } from "../src/model/anthropic/anthropic-request.ts";
import { ResponsesBodyEncoder } from "../src/model/responses/responses-body.ts";
import { type ResponsesRequestOptions, toResponsesRequest } from "../src/model/responses/responses-request.ts";
import type { ChatMessage, ToolSpec } from "../src/model/types.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../test/support/model-server.ts";

const STEPS = Number(process.env.BENCH_STEPS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const HISTORY_TURNS = Number(process.env.BENCH_HISTORY_TURNS ?? 2_000);
const AT = "2026-12-01T10:00:00.000Z";

const base = mkdtempSync(join(tmpdir(), "agent-bench-harness-"));

/** A history of `turns` finished turns (a question, a ~1.2 KB answer each), as the file backend stores it. */
function prebuiltHistory(turns: number): string {
  const answer = "The answer, at some length so the request grows as a long session's does. ".repeat(16);
  const lines: string[] = [];
  for (let i = 0; i < turns; i++) {
    const key = `prebuilt-${i}`;
    lines.push(JSON.stringify({ v: 1, type: "turn", at: AT, key, status: "started" }));
    lines.push(JSON.stringify({ v: 1, type: "message", at: AT, message: { role: "user", content: `question ${i}` } }));
    lines.push(JSON.stringify({ v: 1, type: "message", at: AT, message: { role: "assistant", content: `${answer}${i}` } }));
    lines.push(JSON.stringify({ v: 1, type: "turn", at: AT, key, status: "finished", subtype: "success", result: `${answer}${i}` }));
  }
  return lines.length > 0 ? `${lines.join("\n")}\n` : "";
}

interface Setup {
  server: ScriptedModelServer;
  lead: LeadRuntime;
  workspace: string;
  history: string;
}

async function setup(historyTurns: number): Promise<Setup> {
  const server = ScriptedModelServer.start([], {
    // Each request: read the file again until STEPS tool results are in the turn, then answer.
    respond: (request): ScriptedReply => {
      const since = request.body.messages.findLastIndex((m) => m.role === "user");
      const results = request.body.messages.slice(since).filter((m) => m.role === "tool").length;
      return results < STEPS ? { toolCalls: [{ name: "read_file", arguments: { path: "small.txt" } }] } : { text: "done" };
    },
  });
  const dir = mkdtempSync(join(base, "run-"));
  const workspace = join(dir, "ws");
  const stateDir = join(dir, "state");
  mkdirSync(workspace);
  mkdirSync(join(stateDir, "agents"), { recursive: true });
  writeFileSync(join(workspace, "small.txt"), "a small file\n".repeat(20));
  const history = join(stateDir, "agents", "lead.jsonl");
  writeFileSync(history, prebuiltHistory(historyTurns));
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "bench" },
    workspace,
  });
  // The long history is the point: no compaction shortens it.
  settings.compaction.thresholdChars = 1_000_000_000;
  const lead = await buildLead(settings, { stateDir, workspace });
  return { server, lead, workspace, history };
}

let turnNumber = 0;
/** One agent turn; returns its wall time and the requests it made. */
async function agentTurn(s: Setup): Promise<{ ms: number; requests: RecordedRequest[]; appended: string[] }> {
  const before = s.server.requests.length;
  const historyBefore = readFileSync(s.history, "utf8").length;
  const start = performance.now();
  const result = await s.lead.runner.run(`read small.txt ${STEPS} times`, { idempotencyKey: `bench-${turnNumber++}` });
  const ms = performance.now() - start;
  if (result.subtype !== "success") throw new Error(`bench/harness: the turn ended ${result.subtype}`);
  const requests = s.server.requests.slice(before);
  if (requests.length !== STEPS + 1) throw new Error(`bench/harness: ${requests.length} requests, expected ${STEPS + 1}`);
  const appended = readFileSync(s.history, "utf8").slice(historyBefore).split("\n").filter(Boolean);
  return { ms, requests, appended };
}

/**
 * The floor: per step the same request (the body the agent sent, so the same
 * size and the same streamed answer), the same file read and one fsynced append
 * of that step's share of the records the agent appended.
 */
async function bareLoop(s: Setup, requests: RecordedRequest[], appended: string[], file: string): Promise<number> {
  const bodies = requests.map((request) => JSON.stringify(request.body));
  const perStep = Math.ceil(appended.length / requests.length);
  const fd = openSync(file, "a");
  try {
    const start = performance.now();
    for (let i = 0; i < bodies.length; i++) {
      const response = await fetch(`${s.server.url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer bench" },
        body: bodies[i],
      });
      await response.text();
      if (i < bodies.length - 1) readFileSync(join(s.workspace, "small.txt"), "utf8");
      writeSync(fd, `${appended.slice(i * perStep, (i + 1) * perStep).join("\n")}\n`);
      fsyncSync(fd);
    }
    return performance.now() - start;
  } finally {
    closeSync(fd);
  }
}

interface Figures {
  stepMs: number;
  floorStepMs: number;
  ratio: number;
  medianRatio: number;
  requestBytes: number;
}

async function measure(historyTurns: number): Promise<Figures> {
  const s = await setup(historyTurns);
  try {
    const floorFile = join(base, `floor-${historyTurns}.jsonl`);
    appendFileSync(floorFile, readFileSync(s.history));
    // Warm-up: the JIT, the connection, the page cache.
    const warm = await agentTurn(s);
    await bareLoop(s, warm.requests, warm.appended, floorFile);
    const agent: number[] = [];
    const bare: number[] = [];
    let last = warm;
    for (let round = 0; round < ROUNDS; round++) {
      last = await agentTurn(s);
      agent.push(last.ms);
      bare.push(await bareLoop(s, last.requests, last.appended, floorFile));
    }
    const requests = STEPS + 1;
    const best = (values: number[]) => Math.min(...values);
    return {
      stepMs: round2(best(agent) / requests),
      floorStepMs: round2(best(bare) / requests),
      ratio: round2(best(agent) / best(bare)),
      medianRatio: round2(median(agent) / median(bare)),
      requestBytes: JSON.stringify(last.requests.at(-1)!.body).length,
    };
  } finally {
    await s.lead.close();
    await s.server.close();
  }
}

try {
  const fresh = await measure(0);
  console.log(
    `fresh history: ${fresh.stepMs} ms a step, floor ${fresh.floorStepMs} ms; stepRatio ${fresh.ratio} (median ${fresh.medianRatio}; goal <= 1.5), last request ${fresh.requestBytes} B`,
  );
  const long = await measure(HISTORY_TURNS);
  console.log(
    `${HISTORY_TURNS} turns of history: ${long.stepMs} ms a step, floor ${long.floorStepMs} ms; stepRatio2000 ${long.ratio} (median ${long.medianRatio}; goal <= 2), last request ${long.requestBytes} B`,
  );
  const anthropic = anthropicEncoding(HISTORY_TURNS);
  const responses = responsesEncoding(HISTORY_TURNS);
  for (const [dialect, figures] of [["an Anthropic Messages", anthropic], ["a Responses", responses]] as const) {
    console.log(
      `${HISTORY_TURNS} turns of history as ${dialect} request (${figures.bytes} B): ${figures.encodeMs} ms to encode a step, ${figures.stringifyMs} ms to build and stringify it whole`,
    );
  }
  console.log(
    JSON.stringify({
      anthropicEncodeMs2000: anthropic.encodeMs,
      anthropicStringifyMs2000: anthropic.stringifyMs,
      responsesEncodeMs2000: responses.encodeMs,
      responsesStringifyMs2000: responses.stringifyMs,
      steps: STEPS,
      rounds: ROUNDS,
      stepRatio: fresh.ratio,
      stepMs: fresh.stepMs,
      floorStepMs: fresh.floorStepMs,
      stepRatio2000: long.ratio,
      stepMs2000: long.stepMs,
      floorStepMs2000: long.floorStepMs,
      requestBytes2000: long.requestBytes,
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}

/**
 * A native client's body at `turns` turns of history, a step at a time (a tool
 * call and its result added each step): its encoder against the request object
 * built and stringified whole, as the clients did before; the fastest of
 * ROUNDS x 10 steps each. Encoding only: no server speaks these dialects here.
 */
function encodingAt(
  turns: number,
  encode: (messages: ChatMessage[], tools: ToolSpec[]) => Blob,
  stringify: (messages: ChatMessage[], tools: ToolSpec[]) => string,
): { encodeMs: number; stringifyMs: number; bytes: number } {
  const answer = "The answer, at some length so the request grows as a long session's does. ".repeat(16);
  const messages: ChatMessage[] = [{ role: "system", content: "You are the Lead." }];
  for (let i = 0; i < turns; i++) messages.push({ role: "user", content: `question ${i}` }, { role: "assistant", content: `${answer}${i}` });
  const tools: ToolSpec[] = [{ name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } }];
  encode([...messages], tools);
  const encoded: number[] = [];
  const whole: number[] = [];
  let bytes = 0;
  for (let round = 0; round < ROUNDS * 10; round++) {
    messages.push({ role: "assistant", content: null, toolCalls: [{ id: `t${round}`, name: "read_file", arguments: '{"path":"a.txt"}' }] }, { role: "tool", toolCallId: `t${round}`, content: "alpha\n" });
    let started = performance.now();
    bytes = encode([...messages], tools).size;
    encoded.push(performance.now() - started);
    started = performance.now();
    stringify([...messages], tools);
    whole.push(performance.now() - started);
  }
  return { encodeMs: round2(Math.min(...encoded)), stringifyMs: round2(Math.min(...whole)), bytes };
}

function anthropicEncoding(turns: number) {
  const encoder = new AnthropicBodyEncoder();
  const options = (messages: ChatMessage[], tools: ToolSpec[]): AnthropicRequestOptions => ({ model: "claude-sonnet-4-5", messages, tools, maxTokens: 32_000, thinking: false });
  return encodingAt(
    turns,
    (messages, tools) => encoder.encode(options(messages, tools), { stream: true }),
    (messages, tools) => JSON.stringify({ ...toAnthropicRequest(options(messages, tools)), stream: true }),
  );
}

function responsesEncoding(turns: number) {
  const encoder = new ResponsesBodyEncoder();
  const options = (messages: ChatMessage[], tools: ToolSpec[]): ResponsesRequestOptions => ({ model: "gpt-5-mini", messages, tools, maxTokens: 32_000, encryptedReasoning: true });
  return encodingAt(
    turns,
    (messages, tools) => encoder.encode(options(messages, tools), { stream: true }),
    (messages, tools) => JSON.stringify({ ...toResponsesRequest(options(messages, tools)), stream: true }),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
