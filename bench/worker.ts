/**
 * Worker benchmark: what an `agent worker` on the PostgreSQL store costs while
 * its teammates are idle, and how fast it reacts when one gets a message.
 *
 *  (a) idle: the worker holds two idle teammates; over BENCH_IDLE_S seconds its
 *      CPU time (from /proc) and the statements it sends the server (counted in
 *      the server's log, `log_statement = all` on the bench's database) — per second;
 *  (b) wake: a message sent to one of its teammates from another process, until
 *      that teammate's model request reaches the scripted model server; median
 *      over BENCH_WAKES messages.
 *
 * It runs the compiled binary (`dist/agent`, `npm run build` first). With
 * BENCH_BASELINE=/path/to/an/older/agent it measures that one too, in the same
 * run, and prints the ratios new / baseline. The last line is JSON.
 *
 *   bun bench/worker.ts
 *   BENCH_BASELINE=/tmp/agent-before bun bench/worker.ts
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresStores } from "../src/app/mailbox-backend.ts";
import { systemClock } from "../src/core/clock.ts";
import { uuidV7Source } from "../src/core/ids.ts";
import { createMessage } from "../src/core/message.ts";
import { PgMailboxStore } from "../src/postgres/mailbox-store.ts";
import { PgTeammateLeases } from "../src/postgres/teammate-leases.ts";
import { PostgresConnection } from "../src/postgres/connection.ts";
import { SessionStore } from "../src/sessions/session-store.ts";
import { ScriptedModelServer } from "../test/support/model-server.ts";
import { type PostgresCluster, startPostgres } from "../test/support/postgres.ts";

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 15);
const WAKES = Number(process.env.BENCH_WAKES ?? 10);
const BINARY = join(import.meta.dir, "..", "dist", "agent");
const CLOCK_TICKS_PER_S = 100;
const AT = "2026-11-30T10:00:00.000Z";

interface Figures {
  idleCpuPercent: number;
  idleStatementsPerS: number;
  wakeMedianMs: number;
}

/** utime + stime of a process, in clock ticks. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** Statements the server logged between two instants (its log's timestamps are UTC, to the millisecond). */
function statementsLogged(logPath: string, from: Date, to: Date): number {
  const stamp = (at: Date) => at.toISOString().replace("T", " ").replace("Z", "");
  const [start, end] = [stamp(from), stamp(to)];
  return readFileSync(logPath, "utf8")
    .split("\n")
    .filter((line) => / LOG: {2}(execute [^:]*|statement): /.test(line))
    .filter((line) => {
      const at = line.slice(0, 23);
      return at >= start && at < end;
    }).length;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(binary: string, cluster: PostgresCluster, label: string): Promise<Figures> {
  const url = await cluster.database();
  const root = mkdtempSync(join(tmpdir(), "agent-bench-worker-"));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const session = new SessionStore(join(root, "state")).create().id;
  const asked: (() => void)[] = [];
  const server = ScriptedModelServer.start([], {
    respond: () => {
      asked.shift()?.();
      return { text: "done" };
    },
  });
  const connection = await PostgresConnection.open(url, { max: 2 });
  const mailbox = new PgMailboxStore({ sql: connection.sql, session });
  const leases = new PgTeammateLeases({ sql: connection.sql, session });
  const team = postgresStores(connection.sql, session).team;
  // Every statement the worker sends is logged, to be counted.
  await connection.sql.unsafe(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET log_statement = 'all'`);
  for (const name of ["alice", "bob"]) await team.put({ name, role: "helper", state: "idle", createdAtUtc: AT, updatedAtUtc: AT });
  const worker = Bun.spawn(
    [binary, "worker", "--session", session, "--store", url, "--state-dir", join(root, "state"), "--workspace", workspace, "--base-url", server.url, "--quiet"],
    { env: { ...process.env, OPENAI_API_KEY: "bench-key", NO_COLOR: "1" }, stdin: "ignore", stdout: "ignore", stderr: "inherit" },
  );
  try {
    while ((await leases.live()).length < 2) await Bun.sleep(50);
    await Bun.sleep(2_000);
    const ticks0 = cpuTicks(worker.pid);
    const from = new Date();
    const started = performance.now();
    await Bun.sleep(IDLE_S * 1_000);
    const elapsedS = (performance.now() - started) / 1_000;
    const ticks1 = cpuTicks(worker.pid);
    const idleStatementsPerS = statementsLogged(join(cluster.dir, "server.log"), from, new Date()) / elapsedS;
    const idleCpuPercent = ((ticks1 - ticks0) / CLOCK_TICKS_PER_S / elapsedS) * 100;

    const wakes: number[] = [];
    for (let i = 0; i < WAKES; i += 1) {
      const reached = new Promise<void>((resolve) => asked.push(resolve));
      const message = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: `task ${i}` }, { clock: systemClock, ids: uuidV7Source });
      const sentAt = performance.now();
      await mailbox.send(message);
      await reached;
      wakes.push(performance.now() - sentAt);
      // Its turn done and acked before the next one.
      for (;;) {
        const [listing] = await mailbox.list({ agent: "alice" });
        if (listing && listing.counts.ready + listing.counts.processing === 0) break;
        await Bun.sleep(20);
      }
      await Bun.sleep(300);
    }
    const figures = { idleCpuPercent: round(idleCpuPercent), idleStatementsPerS: round(idleStatementsPerS), wakeMedianMs: round(median(wakes)) };
    console.log(`${label}: idle CPU ${figures.idleCpuPercent}%, idle ${figures.idleStatementsPerS} statements/s, wake median ${figures.wakeMedianMs} ms`);
    return figures;
  } finally {
    worker.kill("SIGTERM");
    await worker.exited;
    mailbox.close();
    await connection.close();
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build first`);
const cluster = await startPostgres();
try {
  const baselineBinary = process.env.BENCH_BASELINE;
  // Alternated, so both see the machine's load of the moment.
  const current = await measure(BINARY, cluster, "this build");
  const baseline = baselineBinary ? await measure(baselineBinary, cluster, `baseline ${baselineBinary}`) : undefined;
  const ratios = baseline
    ? {
        idleCpuVsBaseline: round(current.idleCpuPercent / Math.max(baseline.idleCpuPercent, 0.01)),
        idleStatementsVsBaseline: round(current.idleStatementsPerS / Math.max(baseline.idleStatementsPerS, 0.01)),
        wakeVsBaseline: round(current.wakeMedianMs / Math.max(baseline.wakeMedianMs, 0.01)),
      }
    : {};
  console.log(JSON.stringify({ idleSeconds: IDLE_S, wakes: WAKES, current, ...(baseline ? { baseline } : {}), ...ratios }));
} finally {
  await cluster.stop();
}
