// The admin commands that change a stopped session's team — `agent team rm`,
// `reset` and `send` — and the readers `sessions show --timeline` and `agent
// drain`, on the compiled binary with a PostgreSQL store: they act on the
// store's rows with the checks, exit codes and JSON they have on files, a Lead
// holding the session anywhere (its advisory lock) or a worker holding the
// teammate is refused, and a send wakes a listener through NOTIFY.
import { describe, expect, test } from "bun:test";
import { basename } from "node:path";
import { SQL } from "bun";
import { postgresStores } from "../../src/app/mailbox-backend.ts";
import { LEAD } from "../../src/core/agent-name.ts";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { thisHolder } from "../../src/leases/teammate-leases.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { MAIL_CHANNEL } from "../../src/postgres/mail-channel.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgSessionLock } from "../../src/postgres/session-lock.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import type { TeammateRecord } from "../../src/team/team-registry.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { clusterForFile } from "../support/postgres.ts";
import { ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, setup } from "./fixture.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";

const pg = clusterForFile(ensureBinary);
const startServer = scriptedServers();
const AT = "2026-11-30T10:00:00.000Z";

const teammate = (name: string, state: TeammateRecord["state"], extra: Partial<TeammateRecord> = {}): TeammateRecord => ({
  name,
  role: "backend",
  state,
  createdAtUtc: AT,
  updatedAtUtc: AT,
  ...extra,
});

/** Lays out a session's team, histories and mail in the store, as runtimes on any machine would have left them. */
async function seed(url: string, session: string, team: TeammateRecord[], mail: { to: string; content: string }[] = []) {
  const connection = await PostgresConnection.open(url, { max: 1 });
  const mailbox = new PgMailboxStore({ sql: connection.sql, session });
  try {
    const stores = postgresStores(connection.sql, session);
    for (const record of team) {
      await stores.team.put(record);
      const { log } = await stores.histories.open(record.name);
      await log.append([{ v: 1, type: "message", at: AT, message: { role: "user", content: `the task of ${record.name}` } }]);
    }
    for (const { to, content } of mail) {
      await mailbox.send(createMessage({ sender: LEAD, recipient: to, kind: "task", content }, { clock: systemClock, ids: uuidV7Source }));
    }
  } finally {
    mailbox.close();
    await connection.close();
  }
}

async function query<T>(url: string, run: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await run(sql);
  } finally {
    await sql.close();
  }
}

const teamRows = (url: string, session: string) =>
  query(url, async (sql) => {
    const rows: { record: string }[] = await sql`SELECT record FROM agent_teammates WHERE session = ${session} ORDER BY name`;
    return rows.map((row) => JSON.parse(row.record) as TeammateRecord);
  });

const historyAgents = (url: string, session: string) =>
  query(url, async (sql) => {
    const rows: { agent: string }[] = await sql`SELECT DISTINCT agent FROM agent_history WHERE session = ${session} ORDER BY agent`;
    return rows.map((row) => row.agent);
  });

const mailStates = (url: string, session: string, agent: string) =>
  query(url, async (sql) => {
    const rows: { state: string; reason: string | null }[] =
      await sql`SELECT state, reason FROM agent_messages WHERE session = ${session} AND agent = ${agent} ORDER BY created_at_utc, id`;
    return rows.map((row) => ({ ...row }));
  });

describe("agent team rm|reset|send with --store postgres://…", () => {
  test("reset and send change the store's rows, with the file store's checks; a send's NOTIFY wakes a listener", async () => {
    const { agent, sessionId } = setup();
    const url = (await pg().database()).replace("postgres://agent@", "postgres://agent:pg-secret-9@");
    await seed(url, sessionId, [teammate("alice", "failed", { failure: "the model endpoint refused" }), teammate("carol", "idle"), teammate("bob", "shutdown")]);

    const reset = await agent("team", "reset", "alice", "--json", "--store", url);
    expectOk(reset);
    expect(JSON.parse(reset.stdout)).toEqual({ session_id: sessionId, reset: "alice", state: "idle", previous_failure: "the model endpoint refused" });
    const alice = (await teamRows(url, sessionId)).find((t) => t.name === "alice")!;
    expect({ state: alice.state, failure: alice.failure }).toEqual({ state: "idle", failure: undefined });
    // Its history is kept.
    expect(await historyAgents(url, sessionId)).toEqual(["alice", "bob", "carol"]);
    expectError(await agent("team", "reset", "alice", "--store", url), 2, /teammate alice is idle, not failed; only a failed teammate can be reset/);
    expectError(await agent("team", "reset", "nobody", "--store", url), 6, /nobody/);

    // A listener on the mailbox channel, as a running Lead or worker has.
    const listener = new SQL(url, { max: 1 });
    const notified: string[] = [];
    const subscription = await listener.listen(MAIL_CHANNEL, (payload) => notified.push(payload));
    try {
      const sent = await agent("team", "send", "carol", "Also check the indexes.", "--json", "--store", url);
      expectOk(sent);
      const message = JSON.parse(sent.stdout);
      expect(message).toMatchObject({ sender: "user", recipient: "carol", kind: "message", content: "Also check the indexes." });
      expect(await mailStates(url, sessionId, "carol")).toEqual([{ state: "ready", reason: null }]);
      for (let waited = 0; !notified.includes(`${sessionId}/carol`) && waited < 5_000; waited += 20) await Bun.sleep(20);
      expect(notified).toContain(`${sessionId}/carol`);
    } finally {
      await subscription.unlisten().catch(() => {});
      await listener.close();
    }
    expectError(await agent("team", "send", "bob", "hi", "--store", url), 2, /bob is shutdown/);
    expectError(await agent("team", "send", "dave", "hi", "--store", url), 6, /dave/);
    // The files of the same session got none of it.
    expect(JSON.parse((await agent("mailbox", "list", "--json")).stdout).agents).toEqual([]);
    for (const output of [reset, await agent("team", "send", "carol", "hi", "--store", url)]) expect(output.stdout + output.stderr).not.toContain("pg-secret-9");
  });

  test("rm archives the history rows and frees the name; unfinished work needs --force and is quarantined", async () => {
    const { agent, sessionId } = setup();
    const url = await pg().database();
    await seed(url, sessionId, [teammate("bob", "shutdown"), teammate("dave", "running")], [{ to: "dave", content: "index the tables" }]);

    const removed = await agent("team", "rm", "bob", "--json", "--store", url);
    expectOk(removed);
    const outcome = JSON.parse(removed.stdout);
    expect(outcome).toMatchObject({ session_id: sessionId, removed: "bob", state: "shutdown", quarantined: [], worktree: null });
    expect(outcome.history).toMatch(new RegExp(`^postgres:agent_history/${sessionId}/removed/bob-\\d{4}-\\d{2}-\\d{2}T\\d{6}Z$`));
    expect((await teamRows(url, sessionId)).map((t) => t.name)).toEqual(["dave"]);
    expect(await historyAgents(url, sessionId)).toEqual(["dave", outcome.history.split("/").slice(-2).join("/")]);
    expectError(await agent("team", "rm", "bob", "--store", url), 6, /bob/);

    expectError(await agent("team", "rm", "dave", "--store", url), 2, /teammate dave has unfinished work \(state running, 1 message\(s\).*pass --force/);
    const forced = await agent("team", "rm", "dave", "--force", "--store", url);
    expectOk(forced);
    expect(forced.stdout).toMatch(/^removed dave \(running\) from session \S+; history kept at postgres:agent_history\/\S+\/removed\/dave-\S+; 1 unfinished message\(s\) moved to its quarantine\/\n$/);
    expect(await mailStates(url, sessionId, "dave")).toEqual([{ state: "quarantine", reason: "teammate dave removed with `agent team rm --force`" }]);
    expect(await teamRows(url, sessionId)).toEqual([]);
  });

  test("a Lead holding the session in the store (any machine) or a worker holding the teammate is refused: exit 4", async () => {
    const { agent, sessionId } = setup();
    const url = await pg().database();
    await seed(url, sessionId, [teammate("alice", "failed", { failure: "boom" }), teammate("erin", "shutdown"), teammate("gus", "running")]);
    const gusNote = async () => (await agent("team", "list", "--store", url)).stdout.split("\n").find((line) => line.startsWith("gus"));
    const sessionState = async () => JSON.parse((await agent("sessions", "list", "--json", "--store", url)).stdout).sessions[0];
    expect(await gusNote()).toContain("stopped with its runtime; `agent drain` resumes it");

    // The Lead's runtime lock as a runtime on another machine holds it: only the advisory lock, no local lock file.
    const lead = await PgSessionLock.acquire(url, sessionId, { where: "test", fix: "test" });
    try {
      for (const args of [["team", "rm", "erin"], ["team", "reset", "alice"]]) {
        expectError(await agent(...args, "--store", url), 4, new RegExp(`session ${sessionId} is running and owns its team; stop it`));
      }
      // Readers see that Lead, without taking its lock: gus is at work, the session running.
      expect(await gusNote()).not.toContain("stopped with its runtime");
      expect(await sessionState()).toMatchObject({ session_id: sessionId, state: "running", pid: process.pid });
      expectError(await agent("mailbox", "recover", "--store", url), 4, /its processing messages are in progress; stop it first, or pass --force/);
    } finally {
      await lead.release();
    }
    expect(await sessionState()).toMatchObject({ session_id: sessionId, state: "pending" });
    expect((await teamRows(url, sessionId)).map((t) => `${t.name}:${t.state}`)).toEqual(["alice:failed", "erin:shutdown", "gus:running"]);

    // A worker runs erin (workers take no session lock): removing her under it is refused too.
    const connection = await PostgresConnection.open(url, { max: 1 });
    try {
      const leases = new PgTeammateLeases({ sql: connection.sql, session: sessionId });
      const lease = await leases.acquire("erin", thisHolder("worker"), 60_000);
      expectError(await agent("team", "rm", "erin", "--force", "--store", url), 4, new RegExp(`teammate erin is run now by worker pid ${process.pid} on host`));
      await leases.release(lease!);
    } finally {
      await connection.close();
    }
    expectOk(await agent("team", "rm", "erin", "--store", url));
  });
});

describe("agent team send into a running session with --store postgres://…", () => {
  test("the store's notification wakes the running Lead's idle teammate: it works the message at once, not only under the next runtime", async () => {
    const aliceAgain = Promise.withResolvers<void>();
    const server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "count the tables" } }] },
      { identity: "alice", text: "there are 3 tables" },
      // The Lead's user turn goes on until alice has taken the operator's message: nothing in the Lead pokes her meanwhile.
      { identity: "lead", text: "alice is counting.", gate: aliceAgain.promise },
      {
        identity: "alice",
        text: "there are 2 views",
        check: (request) => {
          expect(JSON.stringify(request.body.messages)).toContain("Also count the views.");
          aliceAgain.resolve();
        },
      },
    ], {
      respond: (request) => {
        if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
        return { text: "alice counted 3 tables and 2 views." };
      },
    });
    const { run, agent, sessionDir } = teamSetup();
    const url = await pg().database();
    const running = run(["count the tables with a teammate", "--output", "json", "--base-url", server.url, "--store", url]);
    try {
      // alice answered her task and is idle while the Lead's turn is held.
      const aliceIdle = async () => {
        const session = (() => {
          try {
            return basename(sessionDir());
          } catch {
            return undefined;
          }
        })();
        // Until the run has migrated the fresh database, there is no table to read.
        const team = session === undefined ? [] : await teamRows(url, session).catch(() => []);
        return team.some((t) => t.name === "alice" && t.state === "idle") ? session : undefined;
      };
      let session: string | undefined;
      for (let waited = 0; !(session = await aliceIdle()) && waited < 30_000; waited += 50) await Bun.sleep(50);
      expect(session).toBeDefined();
      expectOk(await agent("team", "send", "alice", "Also count the views.", "--store", url));
      const woken = await Promise.race([aliceAgain.promise.then(() => true), Bun.sleep(20_000).then(() => false)]);
      expect(woken).toBe(true);
    } finally {
      aliceAgain.resolve();
    }
    try {
      const result = await running;
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ subtype: "success" });
      server.assertDone();
    } finally {
      await server.close();
    }
  }, 90_000);
});

describe("agent sessions rm with --store postgres://…", () => {
  test("removes the session's rows with its files; refused (exit 4, nothing removed) while a Lead or a worker runs it", async () => {
    const { agent, sessionId, root } = setup();
    const other = new SessionStore(root).create().id;
    const url = await pg().database();
    await seed(url, sessionId, [teammate("alice", "idle")], [{ to: "alice", content: "one more" }]);
    await seed(url, other, [teammate("bob", "idle")]);
    const rowsOf = (session: string) =>
      query(url, async (sql) => {
        const [row]: { n: number }[] = await sql`
          SELECT ((SELECT count(*) FROM agent_teammates WHERE session = ${session}) + (SELECT count(*) FROM agent_history WHERE session = ${session})
            + (SELECT count(*) FROM agent_messages WHERE session = ${session}) + (SELECT count(*) FROM agent_teammate_leases WHERE session = ${session}))::int AS n`;
        return row!.n;
      });
    expect(await rowsOf(sessionId)).toBe(3);

    const lead = await PgSessionLock.acquire(url, sessionId, { where: "test", fix: "test" });
    try {
      expectError(await agent("sessions", "rm", sessionId, "--store", url), 4, new RegExp(`session ${sessionId} is running; wait for it to finish`));
    } finally {
      await lead.release();
    }
    const connection = await PostgresConnection.open(url, { max: 1 });
    try {
      const leases = new PgTeammateLeases({ sql: connection.sql, session: sessionId });
      const lease = await leases.acquire("alice", thisHolder("worker"), 60_000);
      expectError(await agent("sessions", "rm", sessionId, "--store", url), 4, /teammate alice is run now by worker/);
      await leases.release(lease!);
    } finally {
      await connection.close();
    }
    expect(await rowsOf(sessionId)).toBe(3);

    const removed = await agent("sessions", "rm", sessionId, "--json", "--store", url);
    expectOk(removed);
    expect(JSON.parse(removed.stdout)).toEqual({ removed: sessionId });
    expect(await rowsOf(sessionId)).toBe(0);
    expect(await rowsOf(other)).toBe(2);
    expect(JSON.parse((await agent("sessions", "list", "--json")).stdout).sessions.map((s: { session_id: string }) => s.session_id)).toEqual([other]);
  });
});

describe("readers of the session through the store", () => {
  test("sessions show --timeline reads the histories from the store --store names", async () => {
    const { agent, sessionId } = setup();
    const url = await pg().database();
    await seed(url, sessionId, [teammate("alice", "idle")]);
    const shown = await agent("sessions", "show", sessionId, "--timeline", "--json", "--store", url);
    expectOk(shown);
    expect(JSON.parse(shown.stdout).timeline).toEqual([{ at: AT, agent: "alice", kind: "user", text: "the task of alice" }]);
    const text = await agent("sessions", "show", sessionId, "--timeline", "--store", url);
    expect(text.stdout).toBe(`${AT}  alice  user         the task of alice\n`);
    // The file store's histories of the same session are empty.
    expect((await agent("sessions", "show", sessionId, "--timeline")).stdout).toBe(`session ${sessionId} has no history yet\n`);
  });

  test("sessions list shows, and agent drain picks, the session whose work waits in the store", async () => {
    const server = startServer([{ identity: "lead", text: "ops asked for the status: all green." }]);
    const { drain, stateDir, agent } = teamSetup();
    const url = await pg().database();
    const sessions = new SessionStore(stateDir);
    const pending = sessions.create();
    await Bun.sleep(5);
    const recent = sessions.touch(sessions.create());
    expect(sessions.mostRecent()?.id).toBe(recent.id);
    const connection = await PostgresConnection.open(url, { max: 1 });
    const mailbox = new PgMailboxStore({ sql: connection.sql, session: pending.id });
    try {
      await mailbox.send(createMessage({ sender: "ops", recipient: LEAD, kind: "message", content: "status?" }, { clock: systemClock, ids: uuidV7Source }));
    } finally {
      mailbox.close();
      await connection.close();
    }
    const states = async (...args: string[]) =>
      Object.fromEntries(JSON.parse((await agent("sessions", "list", "--json", ...args)).stdout).sessions.map((s: { session_id: string; state: string }) => [s.session_id, s.state]));
    expect(await states("--store", url)).toEqual({ [pending.id]: "pending", [recent.id]: "idle" });
    expect(await states()).toEqual({ [pending.id]: "idle", [recent.id]: "idle" });
    const drained = await drain(["--output", "json", "--base-url", server.url], { env: { AGENT_STORE: url } });
    expect(drained.code).toBe(0);
    expect(JSON.parse(drained.stdout)).toMatchObject({ session_id: pending.id, result: "ops asked for the status: all green.", events: 1 });
    server.assertDone();
  });
});
