/**
 * Team benchmark, against the scripted model server on 127.0.0.1, through the
 * real runtime (composition root, mailbox, teammate workers, event turns):
 *
 *  (a) wake latency: from a teammate's send_message to the start of the Lead's
 *      event turn for it (the event reaching the Lead's history), median of N;
 *  (b) parallelism: wall time of 4 teammates whose model calls each take 300 ms,
 *      against 1 teammate doing the same, as a ratio (1.0 = perfectly parallel);
 *  (c) batching: a Lead spawning 4 teammates that finish together, every model
 *      call 200 ms; the wall time of the whole run (user turn, team, event
 *      turns) against its batched critical path, as a ratio (goal <= 1.10), and
 *      the event turns run. The critical path is measured in the same run: up
 *      to the last result in the Lead's mailbox, then one Lead model turn — on
 *      an idle machine 3 × 200 ms (spawning call, closing call while the
 *      teammates work, one event turn), printed too; on a loaded one the
 *      measured path is what the run could at best have taken;
 *  (d) scale: a Lead spawning N teammates (1, 8, 32, 64) in one reply, each
 *      teammate 3 model calls (two read_file steps and its answer), every
 *      model call 100 ms; the wall time of the whole run against its ideal
 *      with one batched Lead turn: the spawning call, the teammates' 3 calls,
 *      one event turn (500 ms), as `scaleRatio<N>` (goals: 8 <= 1.15, 32 <= 1.25,
 *      64 <= 1.5).
 *      The server streams each answer's chunks back to back (paceMs 0): the
 *      model's time is the 100 ms, not 130 pauses of 1 ms for 32 tool calls.
 *      The scripted server runs in a process of its own, as a model API does
 *      (its request parsing and streaming for ~100 requests are not the
 *      runtime's work); the same runs with it in this process, interleaved,
 *      are printed beside, as `scaleRatioServerHere<N>`.
 *      BENCH_TRACE=1 prints every event of each run with its time.
 *      Printed with it: when the last teammate's first request reached the
 *      server after the Lead's reply, when the Lead's answering request did
 *      after the last teammate's last answer (`scaleEndChain<N>Ms`: its
 *      result, ack and idle notice, the Lead's claim and history), the Lead's event turns, this process's
 *      CPU time a run (`scaleCpu<N>Ms`, every thread: with the server apart,
 *      the runtime's own work, steadier than the wall on a noisy machine), and
 *      what one file create cost in the bench's directory just before
 *      (`scaleCreate<N>Ms`: on this machine's ext4, which has no journal, a
 *      create scans past the inodes deleted in the last minutes, so it swings
 *      from 0.01 to 1 ms with what earlier processes deleted, and a run makes
 *      ~10 files and directories a teammate; TMPDIR picks the directory).
 *
 * Run as the compiled agent runs a team: with its wider pool for file work
 * (bench/binary-pool.ts; UV_THREADPOOL_SIZE set by hand is measured as it is).
 *
 * The last line is one JSON object with the figures.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSettings, modelClientOptions } from "../src/config/load.ts";
import { preconnectModel } from "../src/model/preconnect.ts";
import { buildLead, type LeadRuntime } from "../src/app/lead.ts";
import type { RunEvent } from "../src/runtime/run-types.ts";
import type { TeamEvent } from "../src/team/teammate-runtime.ts";
import { runUntilQuiet } from "../src/app/until-quiet.ts";
import { type ScriptedReply, ScriptedModelServer } from "../test/support/model-server.ts";
import { ModelServerProcess } from "../test/support/model-server-process.ts";
import { sizePoolAsTheBinaryDoes } from "./binary-pool.ts";

sizePoolAsTheBinaryDoes();

const WAKES = Number(process.env.BENCH_WAKES ?? 30);
const MODEL_DELAY_MS = 300;
const BATCH_DELAY_MS = 200;
const BATCH_TEAMMATES = 4;
const SCALE_DELAY_MS = 100;
const SCALE_SIZES = (process.env.BENCH_SCALE ?? "1,8,32,64").split(",").map(Number);
/** BENCH_ONLY=scale runs only (d), for profiling it. */
const ONLY = process.env.BENCH_ONLY;
/** (d)'s runs of each size (the median is printed), and BENCH_SCALE_APART_ONLY=1 to skip those with the server in this process. */
const SCALE_ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3);
const APART_ONLY = process.env.BENCH_SCALE_APART_ONLY === "1";

/** Whatever the Lead is asked in an event turn: how many results a turn answers is the runtime's business, not the script's. */
const leadNotes = (delayMs = 0) => ({
  respond: (): ScriptedReply => ({ identity: "lead", text: "noted", delayMs }),
});

const base = mkdtempSync(join(tmpdir(), "agent-bench-team-"));

async function runtime(
  script: ScriptedReply[],
  observer?: (event: RunEvent) => void,
  teamObserver?: (event: TeamEvent) => void,
  leadDelayMs = 0,
) {
  const server = ScriptedModelServer.start(script, leadNotes(leadDelayMs));
  return { server, ...(await leadOn(server.url, observer, teamObserver)) };
}

/** A Lead runtime in a fresh state directory and workspace, its model at `baseUrl`. */
async function leadOn(baseUrl: string, observer?: (event: RunEvent) => void, teamObserver?: (event: TeamEvent) => void) {
  const dir = mkdtempSync(join(base, "rt-"));
  const workspace = join(dir, "ws");
  mkdirSync(workspace);
  const { settings } = loadSettings({
    flags: { baseUrl, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "bench" },
    workspace,
  });
  // As `agent run` does once its endpoint is known: the connection is opened while the runtime is built.
  preconnectModel(modelClientOptions(settings), {});
  const lead = await buildLead(settings, { stateDir: join(dir, "state"), workspace, observer, teamObserver });
  return { lead, workspace };
}

/** The Lead's first prompt as `agent run` gives it (runUserTurns): its model request sent ahead while the turn makes the prompt durable. */
function userTurn(lead: LeadRuntime, prompt: string) {
  lead.runner.sendAhead(prompt);
  return lead.runner.run(prompt, { idempotencyKey: crypto.randomUUID() });
}

async function finish(server: ScriptedModelServer, lead: LeadRuntime) {
  await lead.close();
  server.assertDone();
  await server.close();
}

/**
 * (a): while the Lead waits for its team (as `agent run` does), a busy teammate
 * calls send_message to it; the latency is from that send being durable to the
 * event reaching the Lead's history, which starts its event turn.
 */
async function wakeLatencies(): Promise<number[]> {
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const script: ScriptedReply[] = [];
  for (let i = 0; i < WAKES; i++) {
    // Alice reports progress with send_message, then stays busy a little before her result.
    script.push({ identity: "alice", toolCalls: [{ name: "send_message", arguments: { to: "lead", content: `progress ${i}` } }] });
    script.push({ identity: "alice", delayMs: 50, text: `result ${i}` });
  }
  const { server, lead } = await runtime(
    script,
    (event) => {
      if (event.type === "event" && sentAt.has(event.eventId)) latencies.push(performance.now() - sentAt.get(event.eventId)!);
    },
    (event) => {
      if (event.type === "mailbox" && event.op === "send" && event.agent === "lead" && event.kind === "message") {
        sentAt.set(event.id, performance.now());
      }
    },
  );
  await lead.team.spawn("alice", "helper", "report progress 0");
  await runUntilQuiet(lead);
  for (let i = 1; i < WAKES; i++) {
    await lead.team.send("lead", "alice", `report progress ${i}`);
    await runUntilQuiet(lead);
  }
  await finish(server, lead);
  return latencies;
}

/** (b): wall time for `teammates` teammates, each one model call of MODEL_DELAY_MS, until the team is quiet. */
async function teamWallTime(teammates: number): Promise<number> {
  const script: ScriptedReply[] = [];
  for (let i = 0; i < teammates; i++) {
    script.push({ identity: `worker-${i}`, delayMs: MODEL_DELAY_MS, text: `worker-${i} done` });
  }
  const { server, lead } = await runtime(script);
  const start = performance.now();
  for (let i = 0; i < teammates; i++) await lead.team.spawn(`worker-${i}`, "worker", `task ${i}`);
  await runUntilQuiet(lead);
  const elapsed = performance.now() - start;
  await finish(server, lead);
  return elapsed;
}

interface BatchedRun {
  wallMs: number;
  criticalPathMs: number;
  eventTurns: number;
  leadRequests: number;
}

/** (c): wall time of a Lead run whose 4 teammates finish together, its batched critical path, and how many event turns answered them. */
async function batchedRun(): Promise<BatchedRun> {
  const spawns = Array.from({ length: BATCH_TEAMMATES }, (_, i) => ({
    name: "spawn_teammate",
    arguments: { name: `worker-${i}`, role: "worker", prompt: `task ${i}` },
  }));
  const script: ScriptedReply[] = [
    { identity: "lead", delayMs: BATCH_DELAY_MS, toolCalls: spawns },
    { identity: "lead", delayMs: BATCH_DELAY_MS, text: "the team is working" },
    ...spawns.map((_, i) => ({ identity: `worker-${i}`, delayMs: BATCH_DELAY_MS, text: `worker-${i} done` })),
  ];
  let lastResultAt = 0;
  let lastLeadRequestAt = 0;
  const { server, lead } = await runtime(
    script,
    (event) => {
      if (event.type === "model_request" && event.agent === "lead") lastLeadRequestAt = performance.now();
    },
    (event) => {
      if (event.type === "mailbox" && event.op === "send" && event.agent === "lead" && event.kind === "result") lastResultAt = performance.now();
    },
    BATCH_DELAY_MS,
  );
  const start = performance.now();
  await userTurn(lead, "split the work over four workers");
  const quiet = await runUntilQuiet(lead);
  const end = performance.now();
  const leadRequests = server.requests.filter((request) => request.identity === "lead").length;
  await finish(server, lead);
  // Batched at best: the Lead's one event turn (as long as its last one took) starts as the last result lands.
  const criticalPathMs = lastResultAt - start + (end - lastLeadRequestAt);
  return { wallMs: end - start, criticalPathMs, eventTurns: quiet.turns.length, leadRequests };
}

interface ScaleRun {
  wallMs: number;
  /** From the Lead's spawning reply to the last teammate's first model request reaching the server. */
  lastStartMs: number;
  /** From the last teammate's last answer (its request's time plus the model's delay) to the Lead's request that answers the team: result, ack, idle notice, the Lead's claim and history. */
  endChainMs: number;
  eventTurns: number;
  /** This process's CPU time (user and system, every thread) over the run: with the server apart, the runtime's own work. */
  cpuMs: number;
  /** Closing the Lead's runtime once the team is quiet: its teammates' leases given up, its files closed. */
  closeMs: number;
}

/**
 * (d): a Lead spawning `teammates` in one reply; each teammate reads two files,
 * then answers; every model call SCALE_DELAY_MS. `serverHere`: the scripted
 * server runs in this process, on the event loop the agents share, instead of
 * in its own as a model API does.
 */
async function scaleRun(teammates: number, serverHere: boolean): Promise<ScaleRun> {
  const names = Array.from({ length: teammates }, (_, i) => `worker-${i}`);
  const script: ScriptedReply[] = [
    {
      identity: "lead",
      delayMs: SCALE_DELAY_MS,
      paceMs: 0,
      toolCalls: names.map((name, i) => ({ name: "spawn_teammate", arguments: { name, role: "worker", prompt: `task ${i}` } })),
    },
    { identity: "lead", delayMs: SCALE_DELAY_MS, paceMs: 0, text: "the team is working" },
  ];
  for (const name of names) {
    script.push(
      { identity: name, delayMs: SCALE_DELAY_MS, paceMs: 0, toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] },
      { identity: name, delayMs: SCALE_DELAY_MS, paceMs: 0, toolCalls: [{ name: "read_file", arguments: { path: "b.txt" } }] },
      { identity: name, delayMs: SCALE_DELAY_MS, paceMs: 0, text: `${name} done` },
    );
  }
  const fallback: ScriptedReply = { identity: "lead", text: "noted", delayMs: SCALE_DELAY_MS, paceMs: 0 };
  const server = serverHere ? ScriptedModelServer.start(script, { respond: () => fallback }) : await ModelServerProcess.start(script, fallback);
  // Epoch ms, as the server records when each request came.
  let spawnReplyAt = 0;
  let start = performance.now();
  const firstRequestAt = new Map<string, number>();
  const { lead, workspace } = await leadOn(server.url, (event) => {
    if (process.env.BENCH_TRACE && event.type !== "assistant_delta") console.error(`${(performance.now() - start).toFixed(0).padStart(6)} ${event.agent} ${event.type}`);
    if (event.type === "tool_call" && event.agent === "lead" && spawnReplyAt === 0) spawnReplyAt = Date.now();
  });
  writeFileSync(join(workspace, "a.txt"), "alpha\n");
  writeFileSync(join(workspace, "b.txt"), "beta\n");
  start = performance.now();
  const startEpoch = Date.now();
  const cpuBefore = process.cpuUsage();
  await userTurn(lead, `split the work over ${teammates} workers`);
  const quiet = await runUntilQuiet(lead);
  const end = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const closing = performance.now();
  await lead.close();
  const closeMs = performance.now() - closing;
  const requests = server instanceof ScriptedModelServer ? (server.assertDone(), await server.close(), server.requests) : (await server.close()).requests;
  if (process.env.BENCH_TRACE) for (const request of requests) console.error(`server ${request.at - startEpoch} ${request.identity}`);
  // When each teammate's first request reached the model (sent ahead, it goes out before its turn begins).
  for (const request of requests) if (request.identity !== "lead" && request.identity !== undefined && !firstRequestAt.has(request.identity)) firstRequestAt.set(request.identity, request.at);
  const lastTeammateRequest = Math.max(...requests.filter((request) => request.identity !== "lead").map((request) => request.at));
  const leadLastRequest = Math.max(...requests.filter((request) => request.identity === "lead").map((request) => request.at));
  return {
    wallMs: end - start,
    lastStartMs: Math.max(...firstRequestAt.values()) - spawnReplyAt,
    endChainMs: leadLastRequest - (lastTeammateRequest + SCALE_DELAY_MS),
    eventTurns: quiet.turns.length,
    cpuMs: (cpu.user + cpu.system) / 1000,
    closeMs,
  };
}

/**
 * What creating one empty file costs where the runs keep their state, in ms (200
 * created in a directory of their own under the bench's, kept until the end).
 * A team's spawn makes some 11 files and directories a teammate; on this
 * machine's ext4 one costs 0.01–1 ms of kernel time, by how many inodes were
 * deleted in the last minutes, so the scale figures are printed with it.
 */
function createCostMs(): number {
  const dir = mkdtempSync(join(base, "creates-"));
  const started = performance.now();
  for (let i = 0; i < 200; i++) closeSync(openSync(join(dir, `f${i}`), "wx"));
  return (performance.now() - started) / 200;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * (d) for each size, the median of 3 runs, printed: with the model server in a
 * process of its own (the figure the goal is for) and, interleaved, in this one.
 */
async function scale(): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  const ideal = 5 * SCALE_DELAY_MS;
  for (const size of SCALE_SIZES) {
    const createMs = createCostMs();
    const apart: ScaleRun[] = [];
    const here: ScaleRun[] = [];
    for (let round = 0; round < SCALE_ROUNDS; round++) {
      apart.push(await scaleRun(size, false));
      if (!APART_ONLY) here.push(await scaleRun(size, true));
    }
    const wall = median(apart.map((run) => run.wallMs));
    const wallHere = here.length > 0 ? median(here.map((run) => run.wallMs)) : Number.NaN;
    const ratio = wall / ideal;
    console.log(
      `scale ${size} teammates x 3 calls at ${SCALE_DELAY_MS} ms: ideal ${ideal} ms, wall ${wall.toFixed(0)} ms ` +
        `(runs ${apart.map((run) => run.wallMs.toFixed(0)).join("/")}), last teammate's first request ${median(apart.map((run) => run.lastStartMs)).toFixed(0)} ms ` +
        `after the Lead's reply, the Lead's answering request ${median(apart.map((run) => run.endChainMs)).toFixed(0)} ms after the last teammate's last answer, Lead event turns ${apart.map((run) => run.eventTurns).join("/")}, this process's CPU ${median(apart.map((run) => run.cpuMs)).toFixed(0)} ms a run, closing the runtime ${median(apart.map((run) => run.closeMs)).toFixed(1)} ms; scaleRatio${size} ${ratio.toFixed(3)}` +
        (size === 8 ? " (target <= 1.15)" : size === 32 ? " (target <= 1.25)" : "") +
        `; with the server in this process: wall ${wallHere.toFixed(0)} ms (runs ${here.map((run) => run.wallMs.toFixed(0)).join("/")}), ratio ${(wallHere / ideal).toFixed(3)}` +
        `; a file create in ${base} cost ${createMs.toFixed(3)} ms before these runs`,
    );
    figures[`scaleCreate${size}Ms`] = Math.round(createMs * 1000) / 1000;
    figures[`scaleWall${size}Ms`] = Math.round(wall);
    figures[`scaleLastStart${size}Ms`] = Math.round(median(apart.map((run) => run.lastStartMs)));
    figures[`scaleEndChain${size}Ms`] = Math.round(median(apart.map((run) => run.endChainMs)));
    figures[`scaleEventTurns${size}`] = Math.max(...apart.map((run) => run.eventTurns));
    figures[`scaleCpu${size}Ms`] = Math.round(median(apart.map((run) => run.cpuMs)));
    figures[`scaleClose${size}Ms`] = Math.round(median(apart.map((run) => run.closeMs)) * 10) / 10;
    figures[`scaleRatio${size}`] = Math.round(ratio * 1000) / 1000;
    figures[`scaleRatioServerHere${size}`] = Math.round((wallHere / ideal) * 1000) / 1000;
  }
  return figures;
}

try {
  if (ONLY === "scale") console.log(JSON.stringify({ scaleIdealMs: 5 * SCALE_DELAY_MS, ...(await scale()) }));
  else await everything();
} finally {
  rmSync(base, { recursive: true, force: true });
}

async function everything(): Promise<void> {
  const latencies = await wakeLatencies();
  const wakeMedianMs = median(latencies);
  console.log(
    `wake latency over ${latencies.length} sends: median ${wakeMedianMs.toFixed(2)} ms, max ${Math.max(...latencies).toFixed(2)} ms (target: median <= 50 ms)`,
  );
  const one: number[] = [];
  const four: number[] = [];
  for (let round = 0; round < 3; round++) {
    one.push(await teamWallTime(1));
    four.push(await teamWallTime(4));
  }
  const parallelRatio = median(four) / median(one);
  console.log(`wall time: 1 teammate ${median(one).toFixed(0)} ms, 4 teammates ${median(four).toFixed(0)} ms`);
  console.log(`parallelRatio (4 teammates / 1, target <= 1.25): ${parallelRatio.toFixed(3)}`);
  const batched: BatchedRun[] = [];
  for (let round = 0; round < 3; round++) batched.push(await batchedRun());
  const batchRatio = median(batched.map((run) => run.wallMs / run.criticalPathMs));
  const batchWallMs = median(batched.map((run) => run.wallMs));
  const criticalPathMs = median(batched.map((run) => run.criticalPathMs));
  const nominalPathMs = 3 * BATCH_DELAY_MS;
  const eventTurns = Math.max(...batched.map((run) => run.eventTurns));
  console.log(
    `batched event turns: ${BATCH_TEAMMATES} teammates finishing together, ${BATCH_DELAY_MS} ms model calls: wall ${batchWallMs.toFixed(0)} ms, ` +
      `critical path ${criticalPathMs.toFixed(0)} ms measured (${nominalPathMs} ms on an idle machine), ` +
      `event turns per run ${batched.map((run) => run.eventTurns).join("/")}, Lead model requests ${batched.map((run) => run.leadRequests).join("/")}`,
  );
  console.log(`batchRatio (wall / batched critical path, target <= 1.10): ${batchRatio.toFixed(3)}`);
  const scaled = await scale();
  console.log(
    JSON.stringify({
      wakeMedianMs: Math.round(wakeMedianMs * 100) / 100,
      wakeMaxMs: Math.round(Math.max(...latencies) * 100) / 100,
      oneTeammateMs: Math.round(median(one)),
      fourTeammatesMs: Math.round(median(four)),
      parallelRatio: Math.round(parallelRatio * 1000) / 1000,
      batchWallMs: Math.round(batchWallMs),
      batchCriticalPathMs: Math.round(criticalPathMs),
      batchNominalPathMs: nominalPathMs,
      batchEventTurns: eventTurns,
      batchRatio: Math.round(batchRatio * 1000) / 1000,
      scaleIdealMs: 5 * SCALE_DELAY_MS,
      ...scaled,
    }),
  );
}
