/**
 * The CPU time of a real resume: `agent run --resume ID "next"` of the compiled
 * binary (dist/agent, or AGENT_BINARY) on a session whose Lead has a 5 000-turn
 * history (test/support/long-history.ts, compacted at the default threshold;
 * BENCH_RESUME_UNCOMPACTED=1: never compacted, so the resumed run compacts it
 * first), answered by the scripted model server on 127.0.0.1 in this process.
 * The child's user+system CPU, median of ROUNDS runs (each appends a short
 * turn), and the first run's apart (`firstResumeCpuMs`: never compacted, it is
 * the one that compacts); `freshCpuMs` is the same run on a new session, for scale.
 *
 *   bun bench/resume-cpu.ts   (AGENT_BINARY, BENCH_RESUME_TURNS, BENCH_RESUME_ROUNDS, BENCH_RESUME_UNCOMPACTED)
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_COMPACTION } from "../src/runtime/compaction.ts";
import { SessionStore } from "../src/sessions/session-store.ts";
import { longHistory } from "../test/support/long-history.ts";
import { ScriptedModelServer } from "../test/support/model-server.ts";

const binary = process.env.AGENT_BINARY ?? join(import.meta.dir, "..", "dist", "agent");
const TURNS = Number(process.env.BENCH_RESUME_TURNS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_RESUME_ROUNDS ?? 5);
const UNCOMPACTED = process.env.BENCH_RESUME_UNCOMPACTED === "1";
if (!existsSync(binary)) {
  console.error(`bench/resume-cpu: ${binary} is missing; run \`npm run build\` first`);
  process.exit(1);
}

const base = mkdtempSync(join(tmpdir(), "agent-bench-resume-cpu-"));
const workspace = join(base, "ws");
const stateDir = join(base, "state");
mkdirSync(workspace);
const server = ScriptedModelServer.start([], { respond: () => ({ text: "ok" }) });

/** One `agent run`: its session and the CPU it used. */
async function run(args: string[]): Promise<{ session: string; cpuMs: number }> {
  const child = Bun.spawn([binary, "run", ...args, "--output", "json", "--base-url", server.url, "--workspace", workspace, "--state-dir", stateDir], {
    env: { ...process.env, OPENAI_API_KEY: "bench", NO_COLOR: "1" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`bench/resume-cpu: agent run exited ${code}: ${err}`);
  const cpu = child.resourceUsage()!.cpuTime;
  return { session: (JSON.parse(out) as { session_id: string }).session_id, cpuMs: Number(cpu.user + cpu.system) / 1_000 };
}

try {
  const fresh: number[] = [];
  for (let round = 0; round < ROUNDS; round++) fresh.push((await run(["hello"])).cpuMs);
  const { session } = await run(["hello"]);
  const history = join(new SessionStore(stateDir).dirOf(session), "agents", "lead.jsonl");
  if (!existsSync(history)) throw new Error(`bench/resume-cpu: no Lead history at ${history}`);
  writeFileSync(history, longHistory(TURNS, UNCOMPACTED ? {} : { compactAt: DEFAULT_COMPACTION.thresholdChars }));
  const resumed: number[] = [];
  for (let round = 0; round < ROUNDS; round++) resumed.push((await run(["--resume", session, `next ${round}`])).cpuMs);
  const figures = {
    turns: TURNS,
    compacted: !UNCOMPACTED,
    resumeCpuMs: Math.round(median(resumed)),
    // Never compacted: the first resumed run compacts the history, the others read the result.
    firstResumeCpuMs: Math.round(resumed[0]!),
    freshCpuMs: Math.round(median(fresh)),
    resumeCpuRuns: resumed.map(Math.round),
  };
  console.log(
    `${TURNS} turns${UNCOMPACTED ? `, never compacted (the first resume compacts it: ${figures.firstResumeCpuMs} ms)` : ""}: ` +
      `a resumed run used ${figures.resumeCpuMs} ms of CPU, a new session's ${figures.freshCpuMs} ms`,
  );
  console.log(JSON.stringify(figures));
} finally {
  await server.close();
  rmSync(base, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
