/**
 * Start-up benchmark of the compiled binary (dist/agent; build it first), warm:
 * the time of `agent --version` and of `agent mailbox show <id>` against a bare
 * `bun -e 0` started the same way, measured interleaved in this one run, as
 * `versionRatio` and `mailboxShowRatio` (goal for both: <= 3), from the fastest
 * of the rounds (what the code costs; other processes on a shared machine only
 * ever add to it), and `...MedianRatio` from the medians. `runHelpRatio` is
 * `agent run --help` the same way (goal <= 3): help is answered from the
 * commands' argument definitions, without the runtime.
 *
 * `firstRequestMs`: from starting `agent run hello` to its first model request
 * reaching the scripted server on 127.0.0.1 (in this process), and
 * `firstRequestRatio` to `bun -e 0` (goal <= 6). With BENCH_BASELINE=/path/to/an
 * older agent, that one's first request is timed in the same rounds too.
 *
 * The last line is one JSON object with the figures.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedModelServer } from "../test/support/model-server.ts";

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 30);
const root = join(import.meta.dir, "..");
const binary = join(root, "dist", "agent");
if (!existsSync(binary)) {
  console.error("bench/startup: dist/agent is missing; run `npm run build` first");
  process.exit(1);
}

const stateDir = mkdtempSync(join(tmpdir(), "agent-bench-startup-"));
const env = { ...process.env, NO_COLOR: "1" };

function timed(cmd: string[]): number {
  const start = performance.now();
  const child = Bun.spawnSync(cmd, { env, stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - start;
  if (child.exitCode !== 0) throw new Error(`bench/startup: ${cmd.join(" ")} exited ${child.exitCode}: ${child.stderr}`);
  return ms;
}

/** Milliseconds from spawning `agent run` to its first model request reaching `server` (the run is then answered and awaited). */
async function firstRequest(agent: string, server: ScriptedModelServer, arrivals: number[]): Promise<number> {
  const dir = mkdtempSync(join(stateDir, "run-"));
  mkdirSync(join(dir, "ws"));
  const before = arrivals.length;
  const start = performance.now();
  const child = Bun.spawn([agent, "run", "hello", "--base-url", server.url, "--workspace", join(dir, "ws"), "--state-dir", join(dir, "state")], {
    env: { ...env, OPENAI_API_KEY: "bench" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`bench/startup: ${agent} run exited ${code}: ${stderr}`);
  if (arrivals.length === before) throw new Error(`bench/startup: ${agent} run made no model request`);
  return arrivals[before]! - start;
}

try {
  const sent = Bun.spawnSync([binary, "mailbox", "send", "--to", "lead", "--from", "bench", "--content", "hello", "--state-dir", stateDir], { env });
  const id = sent.stdout.toString().trim();
  if (sent.exitCode !== 0) throw new Error(`bench/startup: mailbox send failed: ${sent.stderr}`);
  const commands = {
    bare: [process.execPath, "-e", "0"],
    version: [binary, "--version"],
    mailboxShow: [binary, "mailbox", "show", id, "--state-dir", stateDir],
    runHelp: [binary, "run", "--help"],
  };
  // Warm-up: the binary and bun in the page cache.
  for (const cmd of Object.values(commands)) for (let i = 0; i < 3; i++) timed(cmd);
  const samples: Record<keyof typeof commands, number[]> = { bare: [], version: [], mailboxShow: [], runHelp: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, cmd] of Object.entries(commands) as [keyof typeof commands, string[]][]) samples[name].push(timed(cmd));
  }
  const arrivals: number[] = [];
  const server = ScriptedModelServer.start([], {
    respond: () => {
      arrivals.push(performance.now());
      return { text: "hi" };
    },
  });
  const baseline = process.env.BENCH_BASELINE;
  const firsts: number[] = [];
  const baselineFirsts: number[] = [];
  const firstRounds = Math.max(5, Math.round(ROUNDS / 3));
  try {
    await firstRequest(binary, server, arrivals);
    if (baseline) await firstRequest(baseline, server, arrivals);
    for (let round = 0; round < firstRounds; round++) {
      firsts.push(await firstRequest(binary, server, arrivals));
      if (baseline) baselineFirsts.push(await firstRequest(baseline, server, arrivals));
    }
  } finally {
    await server.close();
  }
  const best = (name: keyof typeof commands) => Math.min(...samples[name]);
  const mid = (name: keyof typeof commands) => median(samples[name]);
  const versionRatio = best("version") / best("bare");
  const mailboxShowRatio = best("mailboxShow") / best("bare");
  const runHelpRatio = best("runHelp") / best("bare");
  console.log(
    `fastest ms of ${ROUNDS} rounds: bun -e 0 ${best("bare").toFixed(1)}, agent --version ${best("version").toFixed(1)}, ` +
      `agent mailbox show ${best("mailboxShow").toFixed(1)}, agent run --help ${best("runHelp").toFixed(1)} ` +
      `(medians ${mid("bare").toFixed(1)}, ${mid("version").toFixed(1)}, ${mid("mailboxShow").toFixed(1)}, ${mid("runHelp").toFixed(1)})`,
  );
  console.log(
    `versionRatio ${versionRatio.toFixed(2)}, mailboxShowRatio ${mailboxShowRatio.toFixed(2)} (target <= 2.5), runHelpRatio ${runHelpRatio.toFixed(2)} (target <= 3)`,
  );
  const firstRequestMs = Math.min(...firsts);
  console.log(
    `first model request of agent run: fastest ${firstRequestMs.toFixed(1)} ms of ${firstRounds} (median ${median(firsts).toFixed(1)}), ` +
      `firstRequestRatio ${(firstRequestMs / best("bare")).toFixed(2)} (target <= 6)` +
      (baseline ? `; baseline ${baseline}: fastest ${Math.min(...baselineFirsts).toFixed(1)} ms (median ${median(baselineFirsts).toFixed(1)})` : ""),
  );
  console.log(
    JSON.stringify({
      versionRatio: round2(versionRatio),
      mailboxShowRatio: round2(mailboxShowRatio),
      runHelpRatio: round2(runHelpRatio),
      versionMedianRatio: round2(mid("version") / mid("bare")),
      mailboxShowMedianRatio: round2(mid("mailboxShow") / mid("bare")),
      runHelpMedianRatio: round2(mid("runHelp") / mid("bare")),
      bareBunMs: round2(best("bare")),
      versionMs: round2(best("version")),
      mailboxShowMs: round2(best("mailboxShow")),
      runHelpMs: round2(best("runHelp")),
      firstRequestMs: round2(firstRequestMs),
      firstRequestRatio: round2(firstRequestMs / best("bare")),
      ...(baseline ? { baselineFirstRequestMs: round2(Math.min(...baselineFirsts)) } : {}),
    }),
  );
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
