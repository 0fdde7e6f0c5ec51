// The admin commands over a PostgreSQL store, on the compiled binary: `agent cron
// list|cancel` and `agent team list` read and change the session's rows, the file
// store's view of the same session stays empty, and the password never shows.
import { describe, expect, test } from "bun:test";
import { CronStore } from "../../src/cron/cron-store.ts";
import { postgresStores } from "../../src/app/mailbox-backend.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { clusterForFile } from "../support/postgres.ts";
import { ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, setup } from "./fixture.ts";

const pg = clusterForFile(ensureBinary);

const job = (n: number) => ({
  id: `0190b8a6-7c1e-7d3a-9f00-00000000000${n}`,
  cron: "0 9 * * *",
  prompt: `job ${n}`,
  recurring: true,
  durable: true,
  createdAtUtc: `2026-01-01T00:00:0${n}.000Z`,
  nextRunAtUtc: `2026-01-0${n + 1}T09:00:00.000Z`,
});

describe("admin commands with --store postgres://…", () => {
  test("cron list and cancel work on the session's rows; team list reads its teammates there", async () => {
    const { agent, sessionId } = setup();
    const url = (await pg().database()).replace("postgres://agent@", "postgres://agent:pg-secret-7@");
    // As a runtime on any machine would have stored them.
    const connection = await PostgresConnection.open(url, { max: 1 });
    try {
      const stores = postgresStores(connection.sql, sessionId);
      const cron = new CronStore(stores.cron);
      await cron.add(job(1));
      await cron.add(job(2));
      const at = "2026-01-01T00:00:00.000Z";
      await stores.team.put({ name: "alice", role: "backend", state: "idle", createdAtUtc: at, updatedAtUtc: at });
    } finally {
      await connection.close();
    }

    const listed = await agent("cron", "list", "--json", "--store", url);
    expectOk(listed);
    expect(JSON.parse(listed.stdout)).toEqual({ session_id: sessionId, jobs: [job(1), job(2)] });
    // The files of the same session hold none of it.
    expect((await agent("cron", "list")).stdout).toBe(`no durable cron jobs in session ${sessionId}\n`);

    const cancelled = await agent("cron", "cancel", job(1).id, "--store", url);
    expectOk(cancelled);
    expect(cancelled.stdout).toBe(`cancelled cron job ${job(1).id} (0 9 * * *)\n`);
    expectError(await agent("cron", "cancel", job(1).id, "--store", url), 6, /no cron job/);
    expect(JSON.parse((await agent("cron", "list", "--json", "--store", url)).stdout).jobs).toEqual([job(2)]);

    const team = await agent("team", "list", "--json", "--store", url);
    expectOk(team);
    expect(JSON.parse(team.stdout).teammates).toMatchObject([{ name: "alice", state: "idle", mailbox: { ready: 0, processing: 0, done: 0, quarantine: 0 } }]);
    for (const output of [listed, cancelled, team]) expect(output.stdout + output.stderr).not.toContain("pg-secret-7");
  });
});
