/**
 * Store benchmark: the file store and the PostgreSQL store in one run, on the same
 * disk, with figures as ratios (absolute times on a shared machine are noisy).
 *
 *  (a) sends per second, one process;
 *  (b) claim+ack pairs per second over a prefilled mailbox, with 1 and 4 consumer
 *      processes (each its own store, as separate runtimes or workers would be);
 *  (c) the PostgreSQL limit: a bare `INSERT …; DELETE … RETURNING` loop (two
 *      statements, two commits per message, as a claim and an ack are) on the same
 *      server with 1 and 4 processes — `pgClaimAckVsBare1`/`…4` (goal ≥ 0.7). The
 *      store's claim+ack and the bare loop run in alternating blocks, BENCH_ROUNDS
 *      rounds of them (the order flips each round), and each ratio is the median of
 *      the rounds' ratios: the machine's load drifts, and a drift then weighs on both
 *      sides of a ratio instead of on whichever phase ran in it;
 *  (d) wake latency: from a send in one process to the wake-up of a watcher in
 *      another (LISTEN/NOTIFY for PostgreSQL, the ready/ poll for files), median
 *      (goal ≤ 20 ms for PostgreSQL).
 *
 * The cluster is a throw-away one (test/support/postgres.ts) with fsync and
 * synchronous commit ON, so both stores pay for durability. The last line is one
 * JSON object with every figure.
 *
 *   bun bench/store.ts          (BENCH_MESSAGES, BENCH_ROUNDS, BENCH_WAKES to size it)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { systemClock } from "../src/core/clock.ts";
import { uuidV7Source } from "../src/core/ids.ts";
import { createMessage } from "../src/core/message.ts";
import { FileMailboxStore } from "../src/mailbox/file-store.ts";
import { FileMailWakeups } from "../src/mailbox/file-wakeups.ts";
import type { MailboxStore } from "../src/mailbox/store.ts";
import type { MailWakeups } from "../src/mailbox/wakeups.ts";
import { PostgresConnection } from "../src/postgres/connection.ts";
import { PgMailWakeups } from "../src/postgres/mail-wakeups.ts";
import { PgMailboxStore } from "../src/postgres/mailbox-store.ts";
import { startPostgres } from "../test/support/postgres.ts";

/** Messages per block (the 4-process blocks share them). */
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WAKES = Number(process.env.BENCH_WAKES ?? 40);
const SESSION = "bench";
const CONTENT = "Write schema.sql with a users table (id, email, created_at) and report back.";

type Kind = "file" | "postgres";
const now = () => performance.timeOrigin + performance.now();

function open(kind: Kind, place: string, pool = 2): { store: MailboxStore; wakeups: () => MailWakeups; close(): Promise<void> } {
  if (kind === "file") {
    return { store: new FileMailboxStore({ stateDir: place }), wakeups: () => new FileMailWakeups({ stateDir: place }), close: async () => {} };
  }
  const sql = new SQL(place, { max: pool });
  const store = new PgMailboxStore({ sql, session: SESSION });
  return {
    store,
    wakeups: () => new PgMailWakeups({ sql, session: SESSION }),
    async close() {
      store.close();
      await sql.close();
    },
  };
}

function message(recipient: string, content = CONTENT) {
  return createMessage({ sender: "lead", recipient, kind: "task", content }, { clock: systemClock, ids: uuidV7Source });
}

// ---- child processes ---------------------------------------------------------

async function waitForGo(): Promise<void> {
  for await (const _ of console) return;
}

interface Span {
  start: number;
  end: number;
  count: number;
}

async function consume(kind: Kind, place: string, agent: string): Promise<Span> {
  const opened = open(kind, place);
  await opened.store.claim("nobody"); // connected (and warmed) before the start
  console.log("ready");
  await waitForGo();
  const start = now();
  let count = 0;
  for (let m = await opened.store.claim(agent); m; m = await opened.store.claim(agent)) {
    await opened.store.ack(m);
    count += 1;
  }
  const end = now();
  await opened.close();
  return { start, end, count };
}

async function bare(url: string, count: number, tag: string): Promise<Span> {
  const sql = new SQL(url, { max: 1 });
  await sql`SELECT 1`;
  console.log("ready");
  await waitForGo();
  const start = now();
  for (let i = 0; i < count; i++) {
    const id = `${tag}-${i}`;
    await sql`INSERT INTO bench_bare (id, body) VALUES (${id}, ${CONTENT})`;
    await sql`DELETE FROM bench_bare WHERE id = ${id} RETURNING body`;
  }
  const end = now();
  await sql.close();
  return { start, end, count };
}

/** Claims what each wake-up brings; a message's content is its send time. */
async function watch(kind: Kind, place: string, agent: string, expected: number): Promise<number[]> {
  const opened = open(kind, place);
  const wakeups = opened.wakeups();
  const latencies: number[] = [];
  const done = Promise.withResolvers<void>();
  let draining = false;
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      for (let m = await opened.store.claim(agent); m; m = await opened.store.claim(agent)) {
        latencies.push(now() - Number(m.content));
        await opened.store.ack(m);
      }
    } finally {
      draining = false;
    }
    if (latencies.length >= expected) done.resolve();
  };
  await wakeups.watch(agent as never, () => void drain());
  await opened.store.claim("nobody");
  console.log("ready");
  await done.promise;
  await wakeups.close();
  await opened.close();
  return latencies;
}

// ---- parent ------------------------------------------------------------------

function child(args: string[]) {
  const proc = Bun.spawn([process.execPath, import.meta.path, ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = (async function* () {
    let pending = "";
    for await (const chunk of proc.stdout) {
      pending += new TextDecoder().decode(chunk);
      let i: number;
      while ((i = pending.indexOf("\n")) >= 0) {
        yield pending.slice(0, i);
        pending = pending.slice(i + 1);
      }
    }
  })();
  return {
    async ready() {
      const { value } = await lines.next();
      if (value !== "ready") throw new Error(`child ${args[0]} did not start: ${value}`);
    },
    go() {
      proc.stdin.write("go\n");
      proc.stdin.flush();
    },
    async result<T>(): Promise<T> {
      const { value } = await lines.next();
      await proc.exited;
      return JSON.parse(value!) as T;
    },
  };
}

/** Starts `n` children, releases them together, and returns pairs per second over their joint span. */
async function together(argsFor: (i: number) => string[], n: number): Promise<number> {
  const children = Array.from({ length: n }, (_, i) => child(argsFor(i)));
  await Promise.all(children.map((c) => c.ready()));
  for (const c of children) c.go();
  const spans = await Promise.all(children.map((c) => c.result<Span>()));
  const count = spans.reduce((sum, s) => sum + s.count, 0);
  const seconds = (Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start))) / 1000;
  return count / seconds;
}

async function sendRate(store: MailboxStore, agent: string, n: number): Promise<number> {
  const start = now();
  for (let i = 0; i < n; i++) await store.send(message(agent));
  return n / ((now() - start) / 1000);
}

/**
 * Prefilled outside the measurement: only claims and acks are timed. Four sends at a
 * time (in FIFO order per sender), so the commits share flushes and the run is shorter.
 */
async function prefill(kind: Kind, place: string, agents: string[]): Promise<void> {
  const opened = open(kind, place, 4);
  for (const agent of agents) {
    await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        for (let i = lane; i < MESSAGES; i += 4) await opened.store.send(message(agent));
      }),
    );
  }
  await opened.close();
}

async function claimAckRate(kind: Kind, place: string, agent: string, consumers: number): Promise<number> {
  return together(() => ["consume", kind, place, agent], consumers);
}

async function bareRate(url: string, processes: number, tag: string): Promise<number> {
  return together((i) => ["bare", url, String(Math.ceil(MESSAGES / processes)), `${tag}-${i}`], processes);
}

interface Round {
  store1: number;
  bare1: number;
  store4: number;
  bare4: number;
}

/**
 * The PostgreSQL store's claim+ack against the bare loop, in alternating blocks:
 * store then bare in even rounds, bare then store in odd ones, each block on a
 * fresh mailbox. A round's ratios compare blocks seconds apart.
 */
async function pgRounds(url: string): Promise<Round[]> {
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await prefill("postgres", url, [`one-${r}`, `four-${r}`]);
    const round = {} as Round;
    const blocks: [keyof Round, () => Promise<number>][] = [
      ["store1", () => claimAckRate("postgres", url, `one-${r}`, 1)],
      ["bare1", () => bareRate(url, 1, `one-${r}`)],
      ["store4", () => claimAckRate("postgres", url, `four-${r}`, 4)],
      ["bare4", () => bareRate(url, 4, `four-${r}`)],
    ];
    const order = r % 2 === 0 ? [0, 1, 2, 3] : [1, 0, 3, 2];
    for (const i of order) {
      const [name, run] = blocks[i]!;
      round[name] = await run();
    }
    console.log(
      `postgres round ${r + 1}: claim+ack ${Math.round(round.store1)}/s vs bare ${Math.round(round.bare1)}/s (1 process), ` +
        `${Math.round(round.store4)}/s vs ${Math.round(round.bare4)}/s (4): ${(round.store1 / round.bare1).toFixed(2)}, ${(round.store4 / round.bare4).toFixed(2)}`,
    );
    rounds.push(round);
  }
  return rounds;
}

async function wakeLatency(kind: Kind, place: string, agent: string): Promise<number> {
  const watcher = child(["watch", kind, place, agent, String(WAKES)]);
  await watcher.ready();
  const opened = open(kind, place);
  for (let i = 0; i < WAKES; i++) {
    await Bun.sleep(15 + Math.random() * 20);
    await opened.store.send(message(agent, String(now())));
  }
  const latencies = await watcher.result<number[]>();
  await opened.close();
  return median(latencies);
}

async function main(): Promise<void> {
  const cluster = await startPostgres({ durable: true });
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "agent-bench-store-"));
  try {
    const url = await cluster.database("bench");
    await (await PostgresConnection.open(url)).close();
    const setup = new SQL(url, { max: 1 });
    await setup`CREATE TABLE bench_bare (id text PRIMARY KEY, body text NOT NULL)`;
    await setup.close();
    const places: Record<Kind, string> = { file: base, postgres: url };

    const figures: Record<string, number> = {};
    for (const kind of ["file", "postgres"] as const) {
      const opened = open(kind, places[kind]);
      figures[`${kind}SendPerSec`] = await sendRate(opened.store, "sink", Math.min(MESSAGES, 1_000));
      await opened.close();
      figures[`${kind}WakeMedianMs`] = await wakeLatency(kind, places[kind], "watched");
    }
    await prefill("file", base, ["one", "four"]);
    figures.fileClaimAck1PerSec = await claimAckRate("file", base, "one", 1);
    figures.fileClaimAck4PerSec = await claimAckRate("file", base, "four", 4);
    const rounds = await pgRounds(url);
    figures.postgresClaimAck1PerSec = median(rounds.map((r) => r.store1));
    figures.postgresClaimAck4PerSec = median(rounds.map((r) => r.store4));
    figures.bare1PerSec = median(rounds.map((r) => r.bare1));
    figures.bare4PerSec = median(rounds.map((r) => r.bare4));
    for (const kind of ["file", "postgres"] as const) {
      console.log(
        `${kind}: send ${Math.round(figures[`${kind}SendPerSec`]!)}/s, claim+ack ${Math.round(figures[`${kind}ClaimAck1PerSec`]!)}/s (1 consumer) ` +
          `${Math.round(figures[`${kind}ClaimAck4PerSec`]!)}/s (4), wake ${figures[`${kind}WakeMedianMs`]!.toFixed(1)} ms median` +
          (kind === "postgres" ? ` (claim+ack: medians of ${ROUNDS} rounds)` : ""),
      );
    }
    console.log(`postgres bare INSERT+DELETE RETURNING: ${Math.round(figures.bare1PerSec)}/s (1 process), ${Math.round(figures.bare4PerSec)}/s (4), medians`);

    const vsBare1 = rounds.map((r) => r.store1 / r.bare1);
    const vsBare4 = rounds.map((r) => r.store4 / r.bare4);
    const ratios = {
      pgClaimAckVsBare1: median(vsBare1),
      pgClaimAckVsBare4: median(vsBare4),
      pgClaimAckVsBare1Min: Math.min(...vsBare1),
      pgClaimAckVsBare4Min: Math.min(...vsBare4),
      pgVsFileSend: figures.postgresSendPerSec! / figures.fileSendPerSec!,
      pgVsFileClaimAck1: figures.postgresClaimAck1PerSec / figures.fileClaimAck1PerSec,
      pgVsFileClaimAck4: figures.postgresClaimAck4PerSec / figures.fileClaimAck4PerSec,
    };
    const span = (values: number[]) => `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}`;
    console.log(
      `pg claim+ack / bare limit, median of ${ROUNDS} rounds: ${ratios.pgClaimAckVsBare1.toFixed(2)} (1; rounds ${span(vsBare1)}), ` +
        `${ratios.pgClaimAckVsBare4.toFixed(2)} (4; rounds ${span(vsBare4)}) (goal >= 0.7); ` +
        `pg with 4 consumers: ${Math.round(figures.postgresClaimAck4PerSec)}/s (goal >= 4000); pg wake ${figures.postgresWakeMedianMs!.toFixed(1)} ms (goal <= 20)`,
    );
    console.log(JSON.stringify({ ...round(ratios, 3), ...round(figures, 1) }));
  } finally {
    await cluster.stop();
    rmSync(base, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function round(values: Record<string, number>, digits: number): Record<string, number> {
  const f = 10 ** digits;
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Math.round(v * f) / f]));
}

const [role, ...rest] = process.argv.slice(2);
if (role === "consume") console.log(JSON.stringify(await consume(rest[0] as Kind, rest[1]!, rest[2]!)));
else if (role === "bare") console.log(JSON.stringify(await bare(rest[0]!, Number(rest[1]), rest[2]!)));
else if (role === "watch") console.log(JSON.stringify(await watch(rest[0] as Kind, rest[1]!, rest[2]!, Number(rest[3]))));
else await main();
