// A teammate taken over by another process while its turn is at the model: the
// old holder's next history append is refused (HISTORY_CONFLICT, PostgreSQL's
// fencing) before any heartbeat told it the lease is gone. That is the end of
// its hold, not a failure of the teammate: no quarantine, no "failed", no
// failure result to the Lead; the message is left to the new holder. Barriers,
// not sleeps: the old holder's model answer waits until the takeover is done.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { loadSettings } from "../../src/config/load.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgHistoryBackend } from "../../src/postgres/history-store.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import type { TeamEvent } from "../../src/team/teammate-runtime.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { clusterForFile } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

const pg = clusterForFile();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

test("lease lost mid-turn, seen as HISTORY_CONFLICT on the next append: the turn stops quietly, the message stays for the new holder", async () => {
  const url = await pg().database();
  const session = crypto.randomUUID();
  const carolAsked = Promise.withResolvers<void>();
  const takenOver = Promise.withResolvers<void>();
  const server = ScriptedModelServer.start([{ identity: "carol", check: () => carolAsked.resolve(), gate: takenOver.promise, text: "carol done: USERS.md" }]);
  cleanups.push(() => server.close());
  const root = tempDir("agent-lease-takeover-");
  const workspace = join(root, "ws");
  mkdirSync(workspace, { recursive: true });
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions", store: url },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  const events: TeamEvent[] = [];
  // Her turn's model call: its records (the turn begun, the task) are in her history by then. Her
  // first request itself goes out earlier, while her spawn is stored (AgentRunner.sendAhead).
  const carolCalling = Promise.withResolvers<void>();
  const observer = (event: RunEvent) => {
    if (event.agent === "carol" && event.type === "model_request") carolCalling.resolve();
  };
  const lead: LeadRuntime = await buildLead(settings, { stateDir: join(root, "state"), workspace, sessionId: session, observer, teamObserver: (e) => events.push(e) });
  cleanups.push(() => lead.close());
  const connection = await PostgresConnection.open(url);
  cleanups.push(() => connection.close());

  await lead.team.spawn("carol", "writer", "document the users table in USERS.md");
  await Promise.all([carolAsked.promise, carolCalling.promise]);
  // Another process takes carol over: her lease has run out by its clock, and it
  // carries on her history (one record is enough to fence the old holder off).
  const later = { now: () => new Date(Date.now() + 60 * 60_000) };
  const leases = new PgTeammateLeases({ sql: connection.sql, session, clock: later });
  const taken = await leases.acquire("carol", { id: "elsewhere:4242:new", pid: 4242, host: "elsewhere", kind: "worker" }, 60 * 60_000);
  expect(taken).not.toBeNull();
  const history = await new PgHistoryBackend(connection.sql, session).open("carol");
  await history.log.append([{ v: 1, type: "message", at: new Date().toISOString(), message: { role: "assistant", content: "the new holder's" } }]);
  takenOver.resolve();

  // The old holder gets its model answer now; its append is refused.
  while (lead.team.hasPendingWork()) await lead.team.nextChange();

  const carolEvents = events.filter((e) => e.type === "teammate" && e.name === "carol");
  expect(carolEvents.filter((e) => e.type === "teammate" && e.state === "failed")).toEqual([]);
  expect(carolEvents.at(-1)).toMatchObject({ reason: expect.stringContaining("lost the lease on teammate carol to worker pid 4242 on elsewhere") });
  expect((await new PgTeamRegistry(connection.sql, session).read()).find((t) => t.name === "carol")?.state).not.toBe("failed");
  const mailbox = new PgMailboxStore({ sql: connection.sql, session });
  const counts = Object.fromEntries((await mailbox.list()).map((listing) => [listing.name, listing.counts]));
  // The task waits in processing/ for the new holder (which recovers it); nothing quarantined, no result to the Lead.
  expect(counts.carol).toMatchObject({ processing: 1, quarantine: 0, done: 0 });
  expect(counts.lead ? counts.lead.ready + counts.lead.processing + counts.lead.done : 0).toBe(0);
  expect(server.problems).toEqual([]);
}, 60_000);
