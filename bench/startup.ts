/**
 * Start-up benchmark of the compiled binary (dist/agent; build it first), warm:
 * the time of `agent --version` and of `agent mailbox show <id>` against a bare
 * `bun -e 0` started the same way, measured interleaved in this one run, as
 * `versionRatio` and `mailboxShowRatio` (goal for both: <= 3), from the fastest
 * of the rounds (what the code costs; other processes on a shared machine only
 * ever add to it), and `...MedianRatio` from the medians.
 *
 * The last line is one JSON object with the figures.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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

try {
  const sent = Bun.spawnSync([binary, "mailbox", "send", "--to", "lead", "--from", "bench", "--content", "hello", "--state-dir", stateDir], { env });
  const id = sent.stdout.toString().trim();
  if (sent.exitCode !== 0) throw new Error(`bench/startup: mailbox send failed: ${sent.stderr}`);
  const commands = {
    bare: [process.execPath, "-e", "0"],
    version: [binary, "--version"],
    mailboxShow: [binary, "mailbox", "show", id, "--state-dir", stateDir],
  };
  // Warm-up: the binary and bun in the page cache.
  for (const cmd of Object.values(commands)) for (let i = 0; i < 3; i++) timed(cmd);
  const samples: Record<keyof typeof commands, number[]> = { bare: [], version: [], mailboxShow: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, cmd] of Object.entries(commands) as [keyof typeof commands, string[]][]) samples[name].push(timed(cmd));
  }
  const best = (name: keyof typeof commands) => Math.min(...samples[name]);
  const mid = (name: keyof typeof commands) => median(samples[name]);
  const versionRatio = best("version") / best("bare");
  const mailboxShowRatio = best("mailboxShow") / best("bare");
  console.log(
    `fastest ms of ${ROUNDS} rounds: bun -e 0 ${best("bare").toFixed(1)}, agent --version ${best("version").toFixed(1)}, ` +
      `agent mailbox show ${best("mailboxShow").toFixed(1)} (medians ${mid("bare").toFixed(1)}, ${mid("version").toFixed(1)}, ${mid("mailboxShow").toFixed(1)})`,
  );
  console.log(`versionRatio ${versionRatio.toFixed(2)}, mailboxShowRatio ${mailboxShowRatio.toFixed(2)} (target <= 3 for both)`);
  console.log(
    JSON.stringify({
      versionRatio: round2(versionRatio),
      mailboxShowRatio: round2(mailboxShowRatio),
      versionMedianRatio: round2(mid("version") / mid("bare")),
      mailboxShowMedianRatio: round2(mid("mailboxShow") / mid("bare")),
      bareBunMs: round2(best("bare")),
      versionMs: round2(best("version")),
      mailboxShowMs: round2(best("mailboxShow")),
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
