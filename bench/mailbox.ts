/**
 * Mailbox benchmark. Prints figures measured in this one run, as ratios, because
 * absolute times on these machines are noisy:
 *
 *  (a) durable round trips (send → claim → ack) per second through FileMailboxStore,
 *      against the same file work done with raw write+fsync+rename+fsync-dir calls
 *      and no locks — the physical limit — as `roundTripRatio` (store / raw);
 *  (b) the cost of one claim at ready depth 10 000 against depth 100, as `depthRatio`;
 *  (c) claim+ack pairs per second against the same two renames and fsyncs done raw,
 *      as `claimAckRatio` (goal >= 0.8; the median of blocks of interleaved pairs) — the
 *      store's pair is one `ackAndClaim` (this message's ack, the next one's claim, under
 *      one take of the locks), as a teammate's loop makes it; until 2026-11-30 it was a
 *      `claim` and an `ack` — and
 *      sends against a raw write+fsync+link+fsync, as `sendRatio`; beside it, the
 *      same raw send with its two waits for the disk on the thread pool (an O_SYNC
 *      write in one task, the directory's fsync in another) and nothing else, as
 *      `sendOffLoopFloorRatio` (raw / that): the most a send that keeps the event
 *      loop free can reach on this disk;
 *  (d) the first claim of a fresh store at ready depth 50 000 against a bare
 *      `readdir` + sort of that folder, as `firstClaimRatio` (goal <= 3);
 *  (e) the same over 50 000 messages whose ids carry no time (teammates' results,
 *      whose ids are derived, and other senders' UUIDs), as `firstClaimForeignRatio`
 *      (goal <= 3), and `mailbox list` of that mailbox (the store's `list` in a
 *      fresh store) against a `readdir` + `lstat` of every entry of its four
 *      directories, as `listRatio` (goal <= 3).
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
import { type FsOps, realFs } from "../src/storage/fs-ops.ts";
import { derivedId } from "../src/team/derived-id.ts";

const ROUND_TRIPS = Number(process.env.BENCH_ROUND_TRIPS ?? 1_000);
const DEEP = 10_000;
const SHALLOW = 100;
const CLAIMS_PER_DEPTH = Number(process.env.BENCH_DEPTH_CLAIMS ?? 200);
const FIRST_CLAIM_DEPTH = Number(process.env.BENCH_FIRST_CLAIM_DEPTH ?? 50_000);
const PAIRS = Number(process.env.BENCH_PAIRS ?? 1_000);
// Pairs per block of claimAckRatio: each block's ratio is its raw time over its store time.
const PAIR_BLOCK = 100;
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

/** Creates `path` and writes `text` O_SYNC in one task of the thread pool, as the store writes a message. */
function writeSynced(path: string, text: string): Promise<void> {
  const flag = (constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_SYNC) as unknown as string;
  return new Promise((resolve, reject) => fs.writeFile(path, text, { flag, mode: 0o600 }, (error) => (error ? reject(error) : resolve())));
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

/**
 * Claim+ack pairs and sends, store against raw, interleaved one operation at a
 * time: on a shared disk the cost of an fsync drifts within seconds, and drift
 * must hit both sides alike. Raw claim+ack is the two renames and two directory
 * fsyncs; raw send is write+fsync of the file, a link into ready/, fsync of ready/.
 *
 * `claimAckRatio` is the median over blocks of PAIR_BLOCK pairs of each block's
 * raw time over its store time. Each block compares the two sides under the same
 * conditions; the median keeps a burst of slow fsyncs from other users of the
 * disk (which lands on a block or two, and weighs on the total far beyond its
 * share of pairs) from deciding the figure. The total over all pairs is printed too.
 */
async function pairsAndSends(n: number) {
  const root = join(base, "raw-ops");
  for (const d of ["ids", "ready", "processing", "done"]) mkdirSync(join(root, d), { recursive: true });
  const store = new FileMailboxStore({ stateDir: join(base, "store-ops") });
  const rawNames: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = message("alice");
    rawNames.push(`${m.id}.json`);
    fs.writeFileSync(join(root, "ready", `${m.id}.json`), serializeMessage(m));
    await store.send(message("alice"));
  }
  // One more, claimed untimed: each timed pair then acks the one held and claims the next.
  await store.send(message("alice"));
  let held = await store.claim("alice");
  const ms = { rawPair: 0, storePair: 0, rawSend: 0, storeSend: 0, offLoopSend: 0 };
  const readyFd = fs.openSync(join(root, "ready"), constants.O_RDONLY | constants.O_DIRECTORY);
  const blocks: { raw: number; store: number }[] = [];
  for (let i = 0; i < n; i++) {
    if (i % PAIR_BLOCK === 0) blocks.push({ raw: 0, store: 0 });
    const block = blocks[blocks.length - 1]!;
    const name = rawNames[i]!;
    let start = performance.now();
    fs.renameSync(join(root, "ready", name), join(root, "processing", name));
    fsyncDir(join(root, "processing"));
    fs.renameSync(join(root, "processing", name), join(root, "done", name));
    fsyncDir(join(root, "done"));
    let took = performance.now() - start;
    ms.rawPair += took;
    block.raw += took;

    start = performance.now();
    held = held && (await store.ackAndClaim(held, "alice"));
    if (!held) throw new Error("bench: nothing to claim");
    took = performance.now() - start;
    ms.storePair += took;
    block.store += took;

    const m = message("bob");
    start = performance.now();
    const fd = fs.openSync(join(root, "ids", m.id), "wx", 0o600);
    fs.writeSync(fd, serializeMessage(m));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.linkSync(join(root, "ids", m.id), join(root, "ready", `${m.id}.json`));
    fsyncDir(join(root, "ready"));
    ms.rawSend += performance.now() - start;

    const sent = message("bob");
    start = performance.now();
    await store.send(sent);
    ms.storeSend += performance.now() - start;

    const offLoop = message("bob");
    start = performance.now();
    await writeSynced(join(root, "ids", offLoop.id), serializeMessage(offLoop));
    fs.linkSync(join(root, "ids", offLoop.id), join(root, "ready", `${offLoop.id}.json`));
    await new Promise<void>((resolve, reject) => fs.fsync(readyFd, (error) => (error ? reject(error) : resolve())));
    ms.offLoopSend += performance.now() - start;
  }
  const blockRatios = blocks.map((b) => b.raw / b.store);
  return {
    claimAckRatio: median(blockRatios),
    claimAckBlockRatios: blockRatios,
    claimAckTotalRatio: ms.rawPair / ms.storePair,
    sendRatio: ms.rawSend / ms.storeSend,
    sendOffLoopFloorRatio: ms.rawSend / ms.offLoopSend,
    storePairsPerSec: n / (ms.storePair / 1000),
    rawPairsPerSec: n / (ms.rawPair / 1000),
  };
}

/**
 * First claim of a fresh store at a deep queue, against `readdir` + sort of the
 * same folder. The queue is seeded with plain file writes (what send leaves in
 * ready/, without the cost of 50 000 fsyncs): only the claim is measured.
 */
async function firstClaimAtDepth(depth: number): Promise<{ claimMs: number; readdirSortMs: number }> {
  const stateDir = join(base, "first-claim");
  const ready = join(stateDir, "mailboxes", "carol", "ready");
  mkdirSync(ready, { recursive: true });
  for (let i = 0; i < depth; i++) {
    const m = message("carol");
    fs.writeFileSync(join(ready, `${m.id}.json`), serializeMessage(m));
  }
  return firstClaims(stateDir, "carol", depth);
}

/** Three rounds of: `readdir` + sort of the agent's ready/, then the first claim of a fresh store; the medians. */
async function firstClaims(stateDir: string, agent: string, depth: number): Promise<{ claimMs: number; readdirSortMs: number }> {
  const ready = join(stateDir, "mailboxes", agent, "ready");
  const claims: number[] = [];
  const listings: number[] = [];
  for (let round = 0; round < 3; round++) {
    let start = performance.now();
    const names = fs.readdirSync(ready).sort();
    listings.push(performance.now() - start);
    if (names.length < depth - round) throw new Error("bench: seeding failed");
    start = performance.now();
    const claimed = await new FileMailboxStore({ stateDir }).claim(agent);
    claims.push(performance.now() - start);
    if (!claimed) throw new Error("bench: nothing to claim");
  }
  return { claimMs: median(claims), readdirSortMs: median(listings) };
}

/** The real calls, fsync excepted: seeds a deep mailbox through `send` in seconds. Never used for what is measured. */
const unsyncedFs: FsOps = { ...realFs, fsyncSync: () => {} };

/**
 * A mailbox of `depth` messages whose ids carry no time — half derived (as a
 * teammate's result's is), half random UUIDs — sent through the store (so it
 * holds what send leaves: files, markers and index records). Then the first
 * claim of a fresh store against `readdir` + sort of ready/, and, with a fifth of
 * them moved on to done/, `list` of a fresh store against `readdir` + `lstat` of
 * every entry of the agent's four state directories.
 */
async function foreignAtDepth(depth: number) {
  const stateDir = join(base, "foreign");
  const seeder = new FileMailboxStore({ stateDir, fs: unsyncedFs });
  for (let i = 0; i < depth; i++) {
    clock.advance(1);
    const id = i % 2 === 0 ? derivedId(crypto.randomUUID(), "result") : crypto.randomUUID();
    await seeder.send(createMessage({ sender: "alice", recipient: "lead", kind: "result", content: CONTENT }, { clock, ids: { next: () => id } }));
  }
  const { claimMs, readdirSortMs } = await firstClaims(stateDir, "lead", depth);
  let held = await seeder.claim("lead");
  for (let i = 0; i < depth / 5 && held; i++) held = await seeder.ackAndClaim(held, "lead");
  const lists: number[] = [];
  const stats: number[] = [];
  for (let round = 0; round < 3; round++) {
    let start = performance.now();
    let entries = 0;
    for (const state of ["ready", "processing", "done", "quarantine"]) {
      const dir = join(stateDir, "mailboxes", "lead", state);
      // quarantine/ (and done/ before the first ack) is made when first used: a readdir that finds none, as `list`'s.
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        fs.lstatSync(`${dir}/${name}`);
        entries += 1;
      }
    }
    stats.push(performance.now() - start);
    start = performance.now();
    const [listing] = await new FileMailboxStore({ stateDir }).list();
    lists.push(performance.now() - start);
    if (listing?.messages.length !== entries || listing.messages.some((m) => m.sender !== "alice")) throw new Error("bench: list disagrees");
  }
  return { claimMs, readdirSortMs, listMs: median(lists), readdirStatMs: median(stats) };
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
  const ops = await pairsAndSends(PAIRS);
  const { claimAckRatio, sendRatio } = ops;
  console.log(`claim+ack pairs/s: store ${ops.storePairsPerSec.toFixed(0)}, raw ${ops.rawPairsPerSec.toFixed(0)}`);
  console.log(`claim+ack blocks of ${PAIR_BLOCK} (raw / store time): ${ops.claimAckBlockRatios.map((r) => r.toFixed(2)).join(" ")}`);
  console.log(
    `claimAckRatio (store / raw, interleaved, median of blocks, higher is better, target >= 0.8): ${claimAckRatio.toFixed(3)}` +
      ` (over all pairs: ${ops.claimAckTotalRatio.toFixed(3)})`,
  );
  console.log(`sendRatio (store / raw, interleaved): ${sendRatio.toFixed(3)}; the raw send with its fsyncs off the loop: ${ops.sendOffLoopFloorRatio.toFixed(3)}`);

  const first = await firstClaimAtDepth(FIRST_CLAIM_DEPTH);
  const firstClaimRatio = first.claimMs / first.readdirSortMs;
  console.log(
    `first claim at depth ${FIRST_CLAIM_DEPTH}: ${first.claimMs.toFixed(1)} ms; readdir+sort ${first.readdirSortMs.toFixed(1)} ms`,
  );
  console.log(`firstClaimRatio (first claim / readdir+sort, lower is better, target <= 3): ${firstClaimRatio.toFixed(3)}`);

  const foreign = await foreignAtDepth(FIRST_CLAIM_DEPTH);
  const firstClaimForeignRatio = foreign.claimMs / foreign.readdirSortMs;
  const listRatio = foreign.listMs / foreign.readdirStatMs;
  console.log(
    `first claim of ids without time at depth ${FIRST_CLAIM_DEPTH}: ${foreign.claimMs.toFixed(1)} ms; readdir+sort ${foreign.readdirSortMs.toFixed(1)} ms`,
  );
  console.log(`firstClaimForeignRatio (first claim / readdir+sort, lower is better, target <= 3): ${firstClaimForeignRatio.toFixed(3)}`);
  console.log(`list of ${FIRST_CLAIM_DEPTH} messages: ${foreign.listMs.toFixed(1)} ms; readdir+lstat ${foreign.readdirStatMs.toFixed(1)} ms`);
  console.log(`listRatio (list / readdir+lstat, lower is better, target <= 3): ${listRatio.toFixed(3)}`);
  console.log(
    JSON.stringify({
      roundTripRatio: round3(roundTripRatio),
      claimAckRatio: round3(claimAckRatio),
      claimAckTotalRatio: round3(ops.claimAckTotalRatio),
      storePairsPerSec: Math.round(ops.storePairsPerSec),
      rawPairsPerSec: Math.round(ops.rawPairsPerSec),
      sendRatio: round3(sendRatio),
      sendOffLoopFloorRatio: round3(ops.sendOffLoopFloorRatio),
      firstClaimRatio: round3(firstClaimRatio),
      firstClaimMsAtDepth50000: round3(first.claimMs),
      readdirSortMsAtDepth50000: round3(first.readdirSortMs),
      firstClaimForeignRatio: round3(firstClaimForeignRatio),
      firstClaimForeignMs: round3(foreign.claimMs),
      readdirSortForeignMs: round3(foreign.readdirSortMs),
      listRatio: round3(listRatio),
      listMs: round3(foreign.listMs),
      readdirStatMs: round3(foreign.readdirStatMs),
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
