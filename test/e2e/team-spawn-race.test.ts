import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { basename } from "node:path";
import { ScriptedModelServer } from "../support/model-server.ts";
import { teamBinaries } from "./team-binaries.ts";
import { parseResult, runSetup } from "./run-fixture.ts";
import { eventsIn } from "./team-fixture.ts";

// Spawn races on PostgreSQL: a Lead with --remote-teammates spawns 8, 16 or 32
// teammates in one reply while two `agent worker` processes take them. The
// Lead's team watch read the rows while the spawns' group-commit writes were
// queued, put the rows it read (still naming each first task as pending) in
// place of the records the spawns had just cleared, and the next write stored
// them back: a teammate stayed `pendingTaskId` with its task in ready/, no
// worker took it, and the Lead waited for ever. A run that does not end within
// the deadline counts as hung, and says which rows were left so.

const RUNS = Number(process.env.SPAWN_RACE_RUNS ?? 20);
/** The sizes to run (all by default): `SPAWN_RACE_SIZES=16,32` to look at some. */
const SIZES = (process.env.SPAWN_RACE_SIZES ?? "8,16,32").split(",").map(Number);
/** Far above a run's time on a loaded machine (~5-15 s at 32): a run past it is stuck. */
const DEADLINE_MS = Number(process.env.SPAWN_RACE_DEADLINE_MS ?? 60_000);
const FINAL = "every teammate reported.";

const team = teamBinaries();
const { start } = team;

/** One run: "ok", or what was left when it hung (or failed otherwise). */
async function oneRun(size: number, run: number): Promise<string> {
  const { workspace, stateDir, sessionDir } = runSetup();
  const url = await team.postgresUrl();
  const session = `race-${size}-${run}`;
  const names = Array.from({ length: size }, (_, i) => `t${i + 1}`);
  const workersUp = Promise.withResolvers<void>();
  let spawned = false;
  const server = ScriptedModelServer.start([], {
    respond: (request) => {
      if (request.identity !== "lead") return { text: `${request.identity} is done` };
      if (!spawned) {
        spawned = true;
        return { toolCalls: names.map((name) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt: `report, ${name}` } })), gate: workersUp.promise };
      }
      const results = new Set(eventsIn(request).filter((event) => event.kind === "result").map((event) => event.from));
      return { text: results.size === size ? FINAL : "Noted." };
    },
  });
  team.serve(server);
  const common = ["--session", session, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--store", url];
  const lead = start(["run", "--remote-teammates", "--output", "json", ...common, "Have every teammate report."]);
  // The Lead's first request means its session exists: the workers can join it.
  while (server.requests.length === 0) {
    if (lead.child.exitCode !== null) return `the Lead exited ${lead.child.exitCode} before asking: ${await lead.stderr}`;
    await Bun.sleep(20);
  }
  const workers = [start(["worker", "--quiet", ...common]), start(["worker", "--quiet", ...common])];
  workersUp.resolve();
  // The store keys the team by the session's id.
  const id = basename(sessionDir());
  const timer = Promise.withResolvers<"hung">();
  const deadline = setTimeout(() => timer.resolve("hung"), DEADLINE_MS);
  const ended = await Promise.race([lead.child.exited, timer.promise]);
  clearTimeout(deadline);
  try {
    if (ended === "hung") {
      const left = await whatIsLeft(url, id);
      lead.child.kill("SIGKILL");
      const said = (await lead.stderr).trim().split("\n").at(-1);
      return `hung: ${left}; requests: ${server.requests.length}; problems: ${server.problems.join(" | ")}; the Lead said: ${said}`;
    }
    const stdout = await new Response(lead.child.stdout).text();
    if (ended !== 0) return `exit ${ended}: ${(await lead.stderr).trim().split("\n").at(-1)}`;
    const result = parseResult(stdout) as { result?: string };
    if (result.result !== FINAL) return `ended without every result: ${result.result}`;
    const stale = await leftPending(url, id);
    return stale === "none" ? "ok" : `ended, rows still pending: ${stale}`;
  } finally {
    for (const running of [lead, ...workers]) running.child.kill("SIGKILL");
    await Promise.all([lead, ...workers].map((running) => running.child.exited));
  }
}

/** The teammates whose stored row still names its first task as pending. */
async function leftPending(url: string, session: string): Promise<string> {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows: { name: string; record: string }[] = await sql`SELECT name, record FROM agent_teammates WHERE session = ${session} ORDER BY name`;
    const pending = rows.filter((row) => (JSON.parse(row.record) as { pendingTaskId?: string }).pendingTaskId !== undefined).map((row) => row.name);
    return pending.length === 0 ? "none" : `${pending.length} of ${rows.length} rows with pendingTaskId (${pending.join(", ")})`;
  } finally {
    await sql.close();
  }
}

/** What a hung run left: each unfinished agent's state, mailbox and lease. */
async function whatIsLeft(url: string, session: string): Promise<string> {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows: { name: string; record: string }[] = await sql`SELECT name, record FROM agent_teammates WHERE session = ${session} ORDER BY name`;
    const mail: { agent: string; state: string; n: number }[] =
      await sql`SELECT agent, state, count(*)::int AS n FROM agent_messages WHERE session = ${session} AND state <> 'done' GROUP BY agent, state`;
    const leases: { name: string; lease_until: Date }[] = await sql`SELECT name, lease_until FROM agent_teammate_leases WHERE session = ${session}`;
    const states = rows.map((row) => JSON.parse(row.record) as { name: string; state: string; pendingTaskId?: string });
    const busy = states.filter((record) => record.state !== "idle" || record.pendingTaskId !== undefined).map((record) => `${record.name} ${record.state}${record.pendingTaskId ? " pending" : ""}`);
    const open = mail.map((row) => `${row.agent} ${row.state} ${row.n}`);
    const live = leases.filter((lease) => new Date(lease.lease_until).getTime() > Date.now()).length;
    return `rows not idle: [${busy.join(", ")}]; mail not done: [${open.join(", ")}]; live leases: ${live} of ${leases.length}`;
  } finally {
    await sql.close();
  }
}

describe("a Lead with --remote-teammates on PostgreSQL spawns many teammates in one reply, two workers", () => {
  for (const size of SIZES) {
    test(`${size} teammates at once, ${RUNS} runs: every run ends with every result, no row left pending`, async () => {
      const outcomes: string[] = [];
      for (let run = 0; run < RUNS; run += 1) outcomes.push(await oneRun(size, run));
      expect(outcomes).toEqual(Array(RUNS).fill("ok"));
    }, RUNS * (DEADLINE_MS + 30_000));
  }
});
