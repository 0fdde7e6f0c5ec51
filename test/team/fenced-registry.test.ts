// Registry writes fenced by the teammate's lease, on both stores: a worker
// stalled past its lease (SIGSTOP, a long pause) resumes still thinking it runs
// alice and stores her as it last knew her. The worker that took her over has
// stored her idle meanwhile; the stalled one's write must be refused and said,
// not land over the new holder's (issue 44). Two runtimes in this process stand
// for the two workers; the taker's clock is an hour ahead, so the stalled
// worker's lease has run out for it without a wait.
import { afterEach, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type Clock, systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { type TeammateLeases, thisHolder } from "../../src/leases/teammate-leases.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { TeamContext } from "../../src/team/team-context.ts";
import { FileTeamRegistry, type TeamRegistry, type TeammatePlan, type TeammateRecord } from "../../src/team/team-registry.ts";
import type { MailboxStore } from "../../src/mailbox/store.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { RemoteTeammates } from "../../src/team/remote-teammates.ts";
import { TeamMail } from "../../src/team/team-mail.ts";
import { TeammateProtocols } from "../../src/team/teammate-protocols.ts";
import { TeammateUnavailableError } from "../../src/team/teammate-errors.ts";
import { TeammateHosting } from "../../src/team/teammate-hosting.ts";
import { clusterForFile } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const cluster = clusterForFile();

/** One session's team registry and teammate leases as a process opens them, on one store. */
type Open = (clock: Clock) => Promise<{ registry: TeamRegistry; leases: TeammateLeases; store: MailboxStore }>;

interface Backend {
  name: string;
  session(): Promise<Open>;
}

const files: Backend = {
  name: "files",
  async session() {
    const dir = join(tempDir("agent-fenced-"), "session");
    return async (clock) => ({ registry: new FileTeamRegistry(dir), leases: new FileTeammateLeases(dir, { clock }), store: new FileMailboxStore({ stateDir: dir }) });
  },
};

const postgres: Backend = {
  name: "PostgreSQL",
  async session() {
    const url = await cluster().database();
    const session = randomUUID();
    return async (clock) => {
      // A pool of its own, as another process has.
      const connection = await PostgresConnection.open(url, { max: 2 });
      closers.push(() => connection.close());
      const sql = connection.sql;
      return { registry: new PgTeamRegistry(sql, session), leases: new PgTeammateLeases({ sql, session, clock }), store: new PgMailboxStore({ sql, session }) };
    };
  },
};

/**
 * A worker's team runtime on the session (a Lead with --remote-teammates when
 * `runsTeammates` is false): what it warns of and loses is kept.
 */
async function worker(open: Open, clock: Clock, runsTeammates = true) {
  const { registry, leases, store: mailbox } = await open(clock);
  const warnings: string[] = [];
  const lost: string[] = [];
  const hosting = new TeammateHosting({
    leases,
    holder: thisHolder("worker"),
    ttlMs: 60_000,
    runsTeammates,
    onLost: (name) => lost.push(name),
    onWarning: (message) => warnings.push(message),
  });
  closers.push(() => hosting.close());
  const dir = tempDir("agent-fenced-worker-");
  const team = new TeamContext(
    {
      store: mailbox,
      inbox: new EventInbox(),
      supervisor: new JobSupervisor(),
      registry,
      histories: new FileHistoryBackend(dir),
      makeRunner: () => Promise.reject(new Error("no teammate runs in this test")),
      hosting,
      clock,
      ids: uuidV7Source,
    },
    { startWorker: () => {}, pumpLead: async () => {} },
  );
  /** Sets alice's record here to `state` (with `plan`) and stores it. */
  const store = async (state: TeammateRecord["state"], plan?: TeammatePlan) => {
    const at = clock.now().toISOString();
    const record: TeammateRecord = { name: "alice", role: "helper", state, createdAtUtc: "2026-12-07T10:00:00.000Z", updatedAtUtc: at, ...(plan ? { plan } : {}) };
    const known = team.workers.get("alice");
    if (known) known.record = record;
    else team.workers.set("alice", { record, runner: undefined, active: false, current: undefined, pokes: 0 });
    await team.persist("alice");
  };
  return { registry, mailbox, hosting, team, store, warnings, lost };
}

const anHourAhead: Clock = { now: () => new Date(Date.now() + 3_600_000) };

describe.each([files, postgres])("registry writes fenced by the lease, store: $name", (backend: Backend) => {
  test("a stalled worker's write after another took its teammate over is refused and said; the new holder's record stays", async () => {
    const open = await backend.session();
    const stalled = await worker(open, systemClock);
    expect(await stalled.hosting.take("alice")).toBe(true);
    await stalled.store("running");
    expect((await stalled.registry.read()).map((r) => r.state)).toEqual(["running"]);

    // Its lease ran out while it was stopped: the other worker takes alice and stores her idle.
    const taker = await worker(open, anHourAhead);
    expect(await taker.hosting.take("alice")).toBe(true);
    await taker.store("idle");
    expect((await taker.registry.read()).map((r) => r.state)).toEqual(["idle"]);

    // Resumed, it still thinks alice is its own: its write is refused.
    expect(stalled.hosting.holds("alice")).toBe(true);
    await stalled.store("running");
    expect((await taker.registry.read()).map((r) => r.state)).toEqual(["idle"]);
    expect(stalled.warnings).toEqual([
      "did not store teammate alice as running: this process no longer holds its lease; the process that took it over writes it now",
    ]);
    // And it learns at once that it lost her.
    for (let i = 0; i < 200 && stalled.lost.length === 0; i += 1) await Bun.sleep(10);
    expect(stalled.lost).toEqual(["alice"]);
    expect(stalled.hosting.holds("alice")).toBe(false);

    // The holder's own writes go on being stored.
    await taker.store("running");
    expect((await taker.registry.read()).map((r) => r.state)).toEqual(["running"]);
    expect(taker.warnings).toEqual([]);
  });
});

// A Lead with --remote-teammates writes no record of a teammate a worker holds
// (issue 44): it holds no lease to fence the write with, and its view of the
// record is as old as its last look. Its review of alice's plan, read when she
// was idle with the plan submitted, used to store her idle with the plan
// approved over the holder's newer "running". The review goes to her as the
// plan_approval_response alone, which her holder applies when it reads it.
describe.each([files, postgres])("a Lead's writes of a teammate a worker holds, store: $name", (backend: Backend) => {
  test("review_plan from a stale view leaves the holder's newer record as it is; the answer is in her mailbox", async () => {
    const open = await backend.session();
    const holder = await worker(open, systemClock);
    expect(await holder.hosting.take("alice")).toBe(true);
    const submitted: TeammatePlan = { state: "submitted", requestId: "0192d4c8-5e1f-7b3a-8c44-2f0a1d9e6b7c" };
    await holder.store("idle", submitted);

    // The Lead looks at the team: alice idle, her plan submitted.
    const lead = await worker(open, systemClock, false);
    new RemoteTeammates(lead.team).sync(await lead.registry.read());
    expect(lead.team.workers.get("alice")?.record).toMatchObject({ state: "idle", plan: submitted });

    // Her holder works on a message meanwhile: stored running, after the Lead's look.
    await holder.store("running", submitted);
    const newer = await holder.registry.read();

    const protocols = new TeammateProtocols(lead.team, new TeamMail(lead.team));
    await protocols.reviewPlan("alice", submitted.requestId!, true, "go ahead");
    expect(await lead.registry.read()).toEqual(newer);
    const listing = await lead.mailbox.list({ agent: "alice" });
    expect(listing.flatMap((l) => l.messages).map((m) => [m.kind, m.state, m.sender])).toEqual([["plan_approval_response", "ready", "lead"]]);
    // Asked again from the same view, it says the request is answered (it is not waiting for the holder's write).
    const again = await protocols.reviewPlan("alice", submitted.requestId!, false, "wait").catch((error: unknown) => error);
    expect(again).toBeInstanceOf(TeammateUnavailableError);
    expect((again as Error).message).toBe(`request_id ${submitted.requestId} is answered already; alice applies that answer when it reads it`);
    expect(lead.warnings).toEqual([]);
  });
});
