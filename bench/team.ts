/**
 * Team benchmark, against the scripted model server on 127.0.0.1, through the
 * real runtime (composition root, mailbox, teammate workers, event turns):
 *
 *  (a) wake latency: from a teammate's send_message to the start of the Lead's
 *      event turn for it (the event reaching the Lead's history), median of N;
 *  (b) parallelism: wall time of 4 teammates whose model calls each take 300 ms,
 *      against 1 teammate doing the same, as a ratio (1.0 = perfectly parallel).
 *
 * The last line is one JSON object with the figures.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSettings } from "../src/config/load.ts";
import { buildLead, type LeadRuntime } from "../src/app/lead.ts";
import type { RunEvent } from "../src/runtime/run-types.ts";
import type { TeamEvent } from "../src/team/teammate-runtime.ts";
import { runUntilQuiet } from "../src/app/until-quiet.ts";
import { type ScriptedReply, ScriptedModelServer } from "../test/support/model-server.ts";

const WAKES = Number(process.env.BENCH_WAKES ?? 30);
const MODEL_DELAY_MS = 300;

const base = mkdtempSync(join(tmpdir(), "agent-bench-team-"));

async function runtime(
  script: ScriptedReply[],
  observer?: (event: RunEvent) => void,
  teamObserver?: (event: TeamEvent) => void,
) {
  const server = ScriptedModelServer.start(script);
  const dir = mkdtempSync(join(base, "rt-"));
  const workspace = join(dir, "ws");
  mkdirSync(workspace);
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "bench" },
    workspace,
  });
  const lead = await buildLead(settings, { stateDir: join(dir, "state"), workspace, observer, teamObserver });
  return { server, lead };
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
    script.push({ identity: "lead", text: `noted progress ${i}` }, { identity: "lead", text: `noted result ${i}` });
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
    script.push({ identity: "lead", text: `noted ${i}` });
  }
  const { server, lead } = await runtime(script);
  const start = performance.now();
  for (let i = 0; i < teammates; i++) await lead.team.spawn(`worker-${i}`, "worker", `task ${i}`);
  await runUntilQuiet(lead);
  const elapsed = performance.now() - start;
  await finish(server, lead);
  return elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

try {
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
  console.log(
    JSON.stringify({
      wakeMedianMs: Math.round(wakeMedianMs * 100) / 100,
      wakeMaxMs: Math.round(Math.max(...latencies) * 100) / 100,
      oneTeammateMs: Math.round(median(one)),
      fourTeammatesMs: Math.round(median(four)),
      parallelRatio: Math.round(parallelRatio * 1000) / 1000,
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
