import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { SQL } from "bun";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import type { MailboxStore } from "../../src/mailbox/store.ts";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import type { TeammateLeases } from "../../src/leases/teammate-leases.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import { PgHistoryBackend } from "../../src/postgres/history-store.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { type HistoryBackend, HistoryStore } from "../../src/runtime/history-store.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { parseResult, runSetup } from "./run-fixture.ts";
import { eventsIn } from "./team-fixture.ts";
import { waitUntil } from "../support/deadline.ts";

// A team spread over processes, on the compiled binary: the Lead runs with
// --remote-teammates, two `agent worker` processes run its teammates, and the
// worker running alice is killed with -9 while alice's model request is in
// flight. The other worker takes alice over from her history; the run completes
// and every input is answered exactly once.

const servers: ScriptedModelServer[] = [];
const pools: SQL[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const pool of pools.splice(0)) await pool.close().catch(() => {});
});
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});

/** Where the team's shared state is: the state dir's files, or a fresh database of a throw-away cluster. */
interface Backend {
  name: string;
  /** The `--store` arguments (none for files). */
  args(): Promise<string[]>;
  /** The session's mailboxes, teammate leases and histories, as the binary wrote them. */
  open(sessionDir: string): { store: MailboxStore; leases: TeammateLeases; histories: HistoryBackend };
}

const files: Backend = {
  name: "files (a shared state dir)",
  args: async () => [],
  open: (sessionDir) => ({
    store: new FileMailboxStore({ stateDir: sessionDir }),
    leases: new FileTeammateLeases(sessionDir),
    histories: new FileHistoryBackend(sessionDir),
  }),
};

function postgres(): Backend {
  let url = "";
  return {
    name: "PostgreSQL",
    async args() {
      cluster ??= startPostgres();
      url = await (await cluster).database();
      return ["--store", url];
    },
    open(sessionDir) {
      const sql = new SQL(url, { max: 2 });
      pools.push(sql);
      const session = basename(sessionDir);
      return {
        store: new PgMailboxStore({ sql, session }),
        leases: new PgTeammateLeases({ sql, session }),
        histories: new PgHistoryBackend(sql, session),
      };
    },
  };
}
const SESSION = "spread-team";
const ALICE_RESULT = "alice: the schema has 2 tables";
const BOB_RESULT = "bob: the README is fine";
const FINAL = "alice and bob have both reported.";

const spawnCall = (name: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt } });

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

interface Running {
  child: Subprocess<"ignore", "pipe", "pipe">;
  stderr: Promise<string>;
}

const children: Running[] = [];
afterEach(async () => {
  for (const { child } of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
});

function start(args: string[]): Running {
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const running = { child, stderr: new Response(child.stderr).text() };
  children.push(running);
  return running;
}

beforeAll(() => {
  ensureBinary();
}, 120_000);

describe.each([files, postgres()])("a Lead with --remote-teammates and two agent worker processes, store: $name", (backend: Backend) => {
  test("the worker running alice is killed with -9 mid-turn: the other one carries her on, each input is answered once", async () => {
    const { workspace, stateDir, sessionDir } = runSetup();
    const workersUp = deferred();
    const aliceAsked = deferred();
    const never = deferred();
    const script: ScriptedReply[] = [
      // Held until both workers run: the session exists once the Lead asks.
      { identity: "lead", toolCalls: [spawnCall("alice", "count the tables"), spawnCall("bob", "check the README")], gate: workersUp.promise },
      { identity: "lead", text: "alice and bob are on it." },
      // alice's first request: never answered — her worker is killed while it waits.
      { identity: "alice", check: () => aliceAsked.resolve(), gate: never.promise, text: "never sent" },
      {
        identity: "alice",
        text: ALICE_RESULT,
        // Carried on from her history: the same task, once.
        check: (request) => expect(request.body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["count the tables"]),
      },
      { identity: "bob", text: BOB_RESULT },
    ];
    // The Lead's event turns: one or two, as the results arrive (together, they share one turn).
    const server = ScriptedModelServer.start(script, {
      respond: (request) => {
        if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
        const results = eventsIn(request).filter((event) => event.kind === "result").map((event) => `${event.from}: ${event.content}`);
        if (results.length > 2 || new Set(results).size !== results.length) throw new Error(`a result reached the Lead twice: ${results.join(" | ")}`);
        return { text: results.length === 2 ? FINAL : "Noted." };
      },
    });
    servers.push(server);
    const common = ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await backend.args())];
    const lead = start(["run", "--session", SESSION, "--remote-teammates", "--output", "json", ...common, "Have alice count the tables and bob check the README."]);
    try {
      // The Lead's first request means its session exists: the workers can join it.
      while (server.requests.length === 0) await Bun.sleep(20);
      const workers = [start(["worker", "--session", SESSION, ...common]), start(["worker", "--session", SESSION, ...common])];
      workersUp.resolve();
      await aliceAsked.promise;
      const { store, leases, histories } = backend.open(sessionDir());
      const holder = (await leases.live()).find((lease) => lease.name === "alice")!.holder;
      const victim = workers.find((worker) => worker.child.pid === holder.pid)!;
      const survivor = workers.find((worker) => worker !== victim)!;
      expect(victim).toBeDefined();
      victim.child.kill("SIGKILL");
      expect(await victim.child.exited).toBe(137);

      const code = await lead.child.exited;
      const stdout = await new Response(lead.child.stdout).text();
      expect({ code, stderr: code === 0 ? "" : await lead.stderr }).toEqual({ code: 0, stderr: "" });
      // Two results and the two idle notices the workers sent through the store.
      expect(parseResult(stdout)).toMatchObject({ subtype: "success", result: FINAL, events: 4 });

      // A clean stop: messages back, leases given up, exit 0.
      survivor.child.kill("SIGTERM");
      expect(await survivor.child.exited).toBe(0);
      expect(await survivor.stderr).toContain("[alice] running (helper)");
      expect(await leases.live()).toEqual([]);
      server.assertDone();

      // Exactly once: two results and two idle notices in the Lead's done/, each teammate's input done, nothing left or quarantined.
      const counts = Object.fromEntries((await store.list()).map((listing) => [listing.name, listing.counts]));
      expect(counts).toEqual({
        lead: { ready: 0, processing: 0, done: 4, quarantine: 0 },
        alice: { ready: 0, processing: 0, done: 1, quarantine: 0 },
        bob: { ready: 0, processing: 0, done: 1, quarantine: 0 },
      });
      // Read from where the store keeps it: the session's files, or the database's rows.
      const leadHistory = JSON.stringify((await HistoryStore.open(histories, "lead")).messages);
      expect(leadHistory.split(ALICE_RESULT).length - 1).toBe(1);
      expect(leadHistory.split(BOB_RESULT).length - 1).toBe(1);
      for (const name of ["alice", "bob"]) expect(leadHistory.split(`${name} is idle`).length - 1).toBe(1);
    } finally {
      never.resolve();
    }
  }, 90_000);
});

describe.each([files, postgres()])("a Lead's runtime without --remote-teammates beside a worker, store: $name", (backend: Backend) => {
  test("agent drain leaves alice to the worker holding her, and carries her on from her history when that worker is killed with -9", async () => {
    const { workspace, stateDir, sessionDir } = runSetup();
    const aliceAsked = deferred();
    const never = deferred();
    const server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [spawnCall("alice", "count the tables")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", check: () => aliceAsked.resolve(), gate: never.promise, text: "never sent" },
      {
        identity: "alice",
        text: ALICE_RESULT,
        check: (request) => expect(request.body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["count the tables"]),
      },
      {
        identity: "lead",
        text: "alice counted them.",
        check: (request) => expect(eventsIn(request).filter((event) => event.kind === "result")).toEqual([{ from: "alice", kind: "result", content: ALICE_RESULT }]),
      },
    ]);
    servers.push(server);
    const common = ["--session", SESSION, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await backend.args())];
    try {
      // The run spawns alice and returns: no process of its own runs her.
      const run = start(["run", "--remote-teammates", "--no-wait", ...common, "Have alice count the tables."]);
      expect(await run.child.exited).toBe(0);
      const worker = start(["worker", ...common]);
      await aliceAsked.promise;

      const drain = start(["drain", "--output", "stream-json", ...common]);
      const reader = drain.child.stdout.getReader();
      let stdout = "";
      // Its first line is printed once the runtime is built: the team restored, alice left to her worker.
      while (!stdout.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        stdout += new TextDecoder().decode(value);
      }
      expect(JSON.parse(stdout.split("\n")[0]!)).toMatchObject({ type: "system" });
      expect(server.requests.filter((request) => request.identity === "alice")).toHaveLength(1);

      worker.child.kill("SIGKILL");
      expect(await worker.child.exited).toBe(137);
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) stdout += new TextDecoder().decode(chunk.value);
      const code = await drain.child.exited;
      expect({ code, stderr: code === 0 ? "" : await drain.stderr }).toEqual({ code: 0, stderr: "" });
      // Her result and her idle notice.
      expect(JSON.parse(stdout.trimEnd().split("\n").at(-1)!)).toMatchObject({ subtype: "success", result: "alice counted them.", events: 2 });
      expect(await drain.stderr).toContain("[alice] running (helper)");
      server.assertDone();

      const { store, leases } = backend.open(sessionDir());
      expect(await leases.live()).toEqual([]);
      const counts = Object.fromEntries((await store.list()).map((listing) => [listing.name, listing.counts]));
      expect(counts).toEqual({
        lead: { ready: 0, processing: 0, done: 2, quarantine: 0 },
        alice: { ready: 0, processing: 0, done: 1, quarantine: 0 },
      });
    } finally {
      never.resolve();
    }
  }, 90_000);
});

describe("agent worker's usage errors", () => {
  test("no --session is exit 2, an unknown one exit 6, --max-teammates 0 exit 2: one line each, before anything runs", async () => {
    const { workspace, stateDir } = runSetup();
    const worker = async (...args: string[]) => {
      const running = start(["worker", "--workspace", workspace, "--state-dir", stateDir, ...args]);
      return { code: await running.child.exited, stderr: await running.stderr };
    };
    expect(await worker()).toEqual({
      code: 2,
      stderr: "agent: agent worker needs --session ID: the session whose teammates it runs (`agent sessions list` shows them)\n",
    });
    const unknown = await worker("--session", "nope");
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toMatch(/^agent: no session "nope" in .*; run `agent sessions list` to see the sessions\n$/);
    expect(await worker("--session", "nope", "--max-teammates", "0")).toEqual({
      code: 2,
      stderr: 'agent: invalid value "0" for --max-teammates: expected a whole number greater than 0, e.g. 20\n',
    });
    expect(await worker("--session", "nope", "--lease-ttl", "500ms")).toEqual({
      code: 2,
      stderr: 'agent: invalid value "500ms" for --lease-ttl: give at least 1s, e.g. 15s\n',
    });
  }, 30_000);
});

describe("agent worker --max-teammates", () => {
  test("a worker holding its one teammate leaves the other to the next worker", async () => {
    const { workspace, stateDir, sessionDir } = runSetup();
    const workerUp = deferred();
    const firstAsked = deferred<string>();
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [spawnCall("alice", "count the tables"), spawnCall("bob", "check the README")], gate: workerUp.promise },
        { identity: "lead", text: "alice and bob are on it." },
      ],
      {
        respond: (request) => {
          if (request.identity === "alice" || request.identity === "bob") {
            firstAsked.resolve(request.identity);
            return { text: request.identity === "alice" ? ALICE_RESULT : BOB_RESULT };
          }
          const results = eventsIn(request).filter((event) => event.kind === "result");
          return { text: results.length === 2 ? FINAL : "Noted." };
        },
      },
    );
    servers.push(server);
    const common = ["--session", SESSION, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url];
    const lead = start(["run", "--remote-teammates", "--output", "json", ...common, "Have alice count the tables and bob check the README."]);
    while (server.requests.length === 0) await Bun.sleep(20);
    // Heartbeats every second: its rounds are what the test counts, not time.
    const first = start(["worker", "--max-teammates", "1", "--lease-ttl", "3s", ...common]);
    workerUp.resolve();
    const taken = await firstAsked.promise;
    const other = taken === "alice" ? "bob" : "alice";
    const { store, leases } = files.open(sessionDir());
    // Two heartbeat rounds later (each a look at the team with room for none), it still holds only the one.
    const heldUntil = async () => (await leases.live()).find((lease) => lease.name === taken)?.leaseUntilUtc ?? "";
    let renewals = 0;
    let last = await heldUntil();
    await waitUntil(async () => {
      const now = await heldUntil();
      if (now > last) [renewals, last] = [renewals + 1, now];
      return renewals >= 2;
    }, `two heartbeats of ${taken}'s lease`, 20_000);
    expect((await leases.live()).map((lease) => [lease.name, lease.holder.pid])).toEqual([[taken, first.child.pid]]);
    expect((await store.list({ agent: other }))[0]!.counts).toMatchObject({ ready: 1, processing: 0, done: 0 });

    const second = start(["worker", "--max-teammates", "1", ...common]);
    expect(await lead.child.exited).toBe(0);
    expect(parseResult(await new Response(lead.child.stdout).text())).toMatchObject({ subtype: "success", result: FINAL });
    expect(Object.fromEntries((await leases.live()).map((lease) => [lease.name, lease.holder.pid]))).toEqual({ [taken]: first.child.pid, [other]: second.child.pid });
    for (const worker of [first, second]) worker.child.kill("SIGTERM");
    expect([await first.child.exited, await second.child.exited]).toEqual([0, 0]);
    expect(await first.stderr).not.toContain(`[${other}] running`);
    expect(await second.stderr).toContain(`[${other}] running (helper)`);
  }, 60_000);
});

const RUNS = 10;

/**
 * SIGSTOPs `pid` at a moment it holds no flock (/proc/locks): stopped inside one of
 * its short store sections (a claim, a heartbeat), a process blocks every other
 * process of the state dir until it resumes — what any lock its holder keeps does,
 * and not what this test is about.
 */
function stopHoldingNoLock(pid: number): void {
  for (;;) {
    process.kill(pid, "SIGSTOP");
    // Delivered asynchronously: wait until it is stopped before looking at its locks.
    while (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "T") Bun.sleepSync(1);
    const held = readFileSync("/proc/locks", "utf8")
      .split("\n")
      .some((line) => line.trim().split(/\s+/)[4] === String(pid));
    if (!held) return;
    process.kill(pid, "SIGCONT");
    Bun.sleepSync(5);
  }
}
describe.each([files, postgres()])("a worker stalled past its leases, store: $name", (backend: Backend) => {
  // SIGSTOP past the lease, another worker takes its teammates over, SIGCONT,
  // SIGTERM: the stalled worker gives back nothing it no longer holds and exits 0
  // (it used to exit 5, "cannot release <id>: it is not in processing/", or fail
  // closing both teammates), 10 runs of 10.
  test("SIGSTOP past the lease, SIGCONT, SIGTERM: exit 0, and the other worker finishes the team's work, 10 of 10", async () => {
    const outcomes: string[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const { workspace, stateDir, sessionDir } = runSetup();
      const workerUp = deferred();
      const never = deferred();
      const firstAsked = { alice: deferred(), bob: deferred() };
      const asked = { alice: 0, bob: 0 };
      const server = ScriptedModelServer.start(
        [
          { identity: "lead", toolCalls: [spawnCall("alice", "count the tables"), spawnCall("bob", "check the README")], gate: workerUp.promise },
          { identity: "lead", text: "alice and bob are on it." },
        ],
        {
          respond: (request) => {
            const who = request.identity;
            if (who === "alice" || who === "bob") {
              asked[who] += 1;
              // The stalled worker's request is never answered; the one that took over gets the result.
              if (asked[who] === 1) {
                firstAsked[who].resolve();
                return { gate: never.promise, text: "never sent" };
              }
              return { text: who === "alice" ? ALICE_RESULT : BOB_RESULT };
            }
            const results = eventsIn(request).filter((event) => event.kind === "result");
            return { text: results.length === 2 ? FINAL : "Noted." };
          },
        },
      );
      servers.push(server);
      const common = ["--session", SESSION, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await backend.args())];
      try {
        const lead = start(["run", "--remote-teammates", "--output", "json", ...common, "Have alice count the tables and bob check the README."]);
        while (server.requests.length === 0) await Bun.sleep(20);
        const stalled = start(["worker", "--lease-ttl", "1s", ...common]);
        workerUp.resolve();
        await Promise.all([firstAsked.alice.promise, firstAsked.bob.promise]);
        stopHoldingNoLock(stalled.child.pid);
        if (run === 0) {
          // Once its leases ran out, `agent team list` says what is happening to the two.
          const list = ["team", "list", "--session", SESSION, "--workspace", workspace, "--state-dir", stateDir, ...common.slice(common.indexOf(server.url) + 1)];
          let rows: string[] = [];
          for (let i = 0; i < 100 && rows.filter((row) => / stalled /.test(row)).length < 2; i += 1) {
            await Bun.sleep(100);
            rows = (await runAgent(list)).stdout.split("\n").filter((line) => /^(alice|bob) /.test(line));
          }
          for (const row of rows) expect(row).toMatch(/^(alice|bob) +helper +stalled .* 0 +1 +0 +0 +the process running it stopped renewing its lease/);
          expect(rows).toHaveLength(2);
        }
        const taker = start(["worker", ...common]);
        const { leases } = backend.open(sessionDir());
        const waitFrom = Date.now();
        for (;;) {
          const live = await leases.live();
          if (live.length === 2 && live.every((lease) => lease.holder.pid === taker.child.pid)) break;
          if (Date.now() - waitFrom > 15_000) {
            stalled.child.kill("SIGKILL");
            taker.child.kill("SIGTERM");
            lead.child.kill("SIGTERM");
            throw new Error(`not taken over: ${JSON.stringify(live)}; taker: ${await taker.stderr}; lead: ${await lead.stderr}`);
          }
          await Bun.sleep(50);
        }
        stalled.child.kill("SIGCONT");
        stalled.child.kill("SIGTERM");
        const code = await stalled.child.exited;
        outcomes.push(code === 0 ? "0" : `exit ${code}: ${(await stalled.stderr).trim().split("\n").at(-1)}`);

        expect(await lead.child.exited).toBe(0);
        expect(parseResult(await new Response(lead.child.stdout).text())).toMatchObject({ subtype: "success", result: FINAL });
        taker.child.kill("SIGTERM");
        expect(await taker.child.exited).toBe(0);
        expect(await leases.live()).toEqual([]);
      } finally {
        never.resolve();
      }
    }
    expect(outcomes).toEqual(Array(RUNS).fill("0"));
  }, 240_000);
});
