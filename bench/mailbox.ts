/**
 * Mailbox benchmark. Prints figures measured in this one run, as ratios, because
 * absolute times on these machines are noisy:
 *
 *  (a) durable round trips (send → claim → ack) per second through FileMailboxStore,
 *      against the same file work done with raw write+fsync+rename+fsync-dir calls
 *      and no locks — the physical limit — as `roundTripRatio` (store / raw);
 *  (b) the cost of one claim at ready depth 10 000 against depth 100, as `depthRatio`.
 *
 * The last line is one JSON object with every figure.
 */
import { constants, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../src/core/clock.ts";
import { uuidV7Source } from "../src/core/ids.ts";
import { createMessage, serializeMessage } from "../src/core/message.ts";
import { FileMailboxStore } from "../src/mailbox/file-store.ts";

const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 1_000);
const DEEP = 10_000;
const SHALLOW = 100;
const CLAIMS_PER_DEPTH = Number(process.env.BENCH_DEPTH_CLAIMS ?? 200);
const CONTENT = "Write schema.sql with a users table (id, email, created_at) and report back.";

// The bench runs on the same disk as the project (not tmpfs), so fsync costs what it costs for users.
const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "agent-bench-"));
const clock = new ManualClock("2026-01-01T00:00:00.000Z");
const ctx = { clock, ids: uuidV7Source };

function message(recipient: string) {
  clock.advance(1);
  return createMessage({ sender: "lead", recipient, kind: "task", content: CONTENT }, ctx);
}

function fsyncDir(path: string) {
  const fd = fs.openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
}

/** The same file work as a round trip, with nothing else: the physical limit. */
function rawRoundTrips(n: number): number {
  const root = join(base, "raw");
  for (const d of ["tmp", "ready", "processing", "done"]) mkdirSync(join(root, d), { recursive: true });
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const m = message("alice");
    const name = `${m.id}.json`;
    const temp = join(root, "tmp", `${m.id}.tmp`);
    const fd = fs.openSync(temp, "wx", 0o600);
    fs.writeSync(fd, serializeMessage(m));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temp, join(root, "ready", name));
    fsyncDir(join(root, "ready"));
    fs.renameSync(join(root, "ready", name), join(root, "processing", name));
    fsyncDir(join(root, "processing"));
    fs.renameSync(join(root, "processing", name), join(root, "done", name));
    fsyncDir(join(root, "done"));
  }
  return n / ((performance.now() - start) / 1000);
}

async function storeRoundTrips(n: number): Promise<number> {
  const store = new FileMailboxStore({ stateDir: join(base, "store") });
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    await store.send(message("alice"));
    const claimed = await store.claim("alice");
    if (!claimed) throw new Error("bench: nothing to claim");
    await store.ack(claimed);
  }
  return n / ((performance.now() - start) / 1000);
}

/** Mean milliseconds per claim while the ready queue stays at `depth`. */
async function claimCostAtDepth(depth: number): Promise<{ steadyMs: number; firstMs: number }> {
  const stateDir = join(base, `depth-${depth}`);
  const seeder = new FileMailboxStore({ stateDir });
  for (let i = 0; i < depth + CLAIMS_PER_DEPTH; i++) await seeder.send(message("bob"));
  // A fresh store, as a new process would have: its first claim reads the queue once.
  const store = new FileMailboxStore({ stateDir });
  let start = performance.now();
  await store.claim("bob");
  const firstMs = performance.now() - start;
  start = performance.now();
  for (let i = 1; i < CLAIMS_PER_DEPTH; i++) {
    if (!(await store.claim("bob"))) throw new Error("bench: queue ran dry");
  }
  return { steadyMs: (performance.now() - start) / (CLAIMS_PER_DEPTH - 1), firstMs };
}

try {
  // Interleave raw and store runs so drift in the machine's speed hits both.
  const raw: number[] = [];
  const ours: number[] = [];
  for (let round = 0; round < 3; round++) {
    raw.push(rawRoundTrips(Math.ceil(ROUND_TRIPS / 3)));
    ours.push(await storeRoundTrips(Math.ceil(ROUND_TRIPS / 3)));
  }
  const rawPerSec = median(raw);
  const storePerSec = median(ours);
  const roundTripRatio = storePerSec / rawPerSec;
  console.log(`rounds: store ${ours.map((v) => v.toFixed(0)).join(" ")}, raw ${raw.map((v) => v.toFixed(0)).join(" ")}`);
  console.log(`round trips/s: store ${storePerSec.toFixed(0)}, raw limit ${rawPerSec.toFixed(0)}`);
  console.log(`roundTripRatio (store / raw, higher is better, target >= 0.5): ${roundTripRatio.toFixed(3)}`);

  const shallow = await claimCostAtDepth(SHALLOW);
  const deep = await claimCostAtDepth(DEEP);
  const depthRatio = deep.steadyMs / shallow.steadyMs;
  console.log(
    `claim ms at depth ${SHALLOW}: ${shallow.steadyMs.toFixed(3)} (first ${shallow.firstMs.toFixed(1)}), ` +
      `at depth ${DEEP}: ${deep.steadyMs.toFixed(3)} (first ${deep.firstMs.toFixed(1)})`,
  );
  console.log(`depthRatio (claim at ${DEEP} / at ${SHALLOW}, lower is better, target <= 1.5): ${depthRatio.toFixed(3)}`);
  console.log(
    JSON.stringify({
      roundTripRatio: round3(roundTripRatio),
      depthRatio: round3(depthRatio),
      storeRoundTripsPerSec: Math.round(storePerSec),
      rawRoundTripsPerSec: Math.round(rawPerSec),
      claimMsAtDepth100: round3(shallow.steadyMs),
      claimMsAtDepth10000: round3(deep.steadyMs),
      firstClaimMsAtDepth100: round3(shallow.firstMs),
      firstClaimMsAtDepth10000: round3(deep.firstMs),
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
