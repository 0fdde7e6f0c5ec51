// `agent team list` reads a teammate's condition beside its mailbox: a spawn
// whose first task is in ready while its record still names it pending is
// under way (no worker may take it yet), not a teammate waiting for a worker.
import { expect, test } from "bun:test";
import { teammateCondition } from "../../src/team/teammate-condition.ts";
import type { TeammateRecord } from "../../src/team/team-registry.ts";

const AT = "2026-12-07T10:00:00.000Z";
const alice: TeammateRecord = { name: "alice", role: "helper", state: "idle", createdAtUtc: AT, updatedAtUtc: AT };
const oneReady = { ready: 1, processing: 0, done: 0, quarantine: 0 };
const live = { runtimeLive: true, leased: false };

test("a teammate with work and no holder waits for a worker once its spawn is done, not while it is under way", () => {
  expect(teammateCondition(alice, oneReady, live)).toBe("waiting for a worker");
  expect(teammateCondition({ ...alice, pendingTaskId: "task-1" }, oneReady, live)).toBeUndefined();
});
