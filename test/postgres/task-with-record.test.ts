// A spawn for a teammate another process runs (a Lead with --remote-teammates)
// sends its first task in the transaction that clears the record's
// pendingTaskId: a worker never sees the task in ready beside a record that
// still calls it pending (it skips such a teammate), and a failed send leaves
// the record pending, as a restore expects of a task that never went out.
import { afterEach, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { systemClock } from "../../src/core/clock.ts";
import { DuplicateMessageIdError } from "../../src/core/errors.ts";
import { createMessage } from "../../src/core/message.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import type { TeammateRecord } from "../../src/team/team-registry.ts";
import { clusterForFile } from "../support/postgres.ts";

const cluster = clusterForFile();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function session() {
  const connection = await PostgresConnection.open(await cluster().database(), { max: 2 });
  closers.push(() => connection.close());
  const id = randomUUID();
  const store = new PgMailboxStore({ sql: connection.sql, session: id });
  closers.push(async () => store.close());
  return { store, registry: new PgTeamRegistry(connection.sql, id, store) };
}

const AT = "2026-12-07T10:00:00.000Z";
const pending = (name: string, taskId: string): TeammateRecord => ({ name, role: "helper", state: "idle", createdAtUtc: AT, updatedAtUtc: AT, pendingTaskId: taskId });
const task = (to: string, id: string) => createMessage({ sender: "lead", recipient: to, kind: "task", content: `report, ${to}` }, { clock: systemClock, ids: { next: () => id } });

test("the task is in ready and the record cleared by one call", async () => {
  const { store, registry } = await session();
  const id = randomUUID();
  await registry.put(pending("alice", id));
  const { pendingTaskId: _sent, ...cleared } = pending("alice", id);
  await registry.changeWithTask!([cleared], task("alice", id));
  expect((await registry.read())[0]?.pendingTaskId).toBeUndefined();
  expect((await store.list({ agent: "alice" }))[0]?.counts).toMatchObject({ ready: 1 });
});

test("a task that cannot be sent leaves the record pending: neither is stored", async () => {
  const { store, registry } = await session();
  const id = randomUUID();
  await registry.put(pending("bob", id));
  // A message of that id is there already: the send fails.
  await store.send(task("carol", id));
  const { pendingTaskId: _sent, ...cleared } = pending("bob", id);
  await expect(registry.changeWithTask!([cleared], task("bob", id))).rejects.toBeInstanceOf(DuplicateMessageIdError);
  expect((await registry.read())[0]?.pendingTaskId).toBe(id);
  expect(await store.list({ agent: "bob" })).toEqual([]);
});

test("without the session's mailbox the registry offers no such call", () => {
  expect(new PgTeamRegistry(undefined as never, "s").changeWithTask).toBeUndefined();
});
