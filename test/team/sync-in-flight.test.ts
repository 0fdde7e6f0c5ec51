// A Lead with --remote-teammates spawns a teammate: its record is stored with
// the first task's id pending, the task goes out, and a second write clears the
// id. Group commit queues that write behind the one under way; the Lead's team
// watch meanwhile reads the rows (the id still pending there) and used to put
// the row in place of the record, so the queued write stored the id back: no
// worker took the teammate (unheld() skips pending ones) and the Lead waited
// for ever (issue 44). A write held at the store stands for "under way".
import { afterEach, expect, test } from "bun:test";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { thisHolder } from "../../src/leases/teammate-leases.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { RemoteTeammates } from "../../src/team/remote-teammates.ts";
import { TeamContext } from "../../src/team/team-context.ts";
import { FileTeamRegistry, type RegistryFences, type TeammateRecord } from "../../src/team/team-registry.ts";
import { TeammateHosting } from "../../src/team/teammate-hosting.ts";
import { tempDir } from "../support/temp-dir.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A file registry whose next change waits, once it started, until let go. */
class HeldRegistry extends FileTeamRegistry {
  #hold: { reached: () => void; until: Promise<void> } | undefined;

  holdNext(): { reached: Promise<void>; letGo: () => void } {
    const reached = Promise.withResolvers<void>();
    const until = Promise.withResolvers<void>();
    this.#hold = { reached: reached.resolve, until: until.promise };
    return { reached: reached.promise, letGo: until.resolve };
  }

  override async change(put: TeammateRecord[], removed: string[], fences?: RegistryFences): Promise<string[]> {
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold) {
      hold.reached();
      await hold.until;
    }
    return super.change(put, removed, fences);
  }
}

/** A Lead's team that runs no teammate itself (--remote-teammates), alice reserved by a spawn with her task pending. */
function leadSpawningAlice() {
  const dir = tempDir("agent-sync-in-flight-");
  const registry = new HeldRegistry(dir);
  const hosting = new TeammateHosting({ leases: new FileTeammateLeases(dir), holder: thisHolder("lead"), ttlMs: 60_000, runsTeammates: false, onLost: () => {} });
  closers.push(() => hosting.close());
  const team = new TeamContext(
    {
      store: new FileMailboxStore({ stateDir: dir }),
      inbox: new EventInbox(),
      supervisor: new JobSupervisor(),
      registry,
      histories: new FileHistoryBackend(dir),
      makeRunner: () => Promise.reject(new Error("no teammate runs in this test")),
      hosting,
      clock: systemClock,
      ids: uuidV7Source,
    },
    { startWorker: () => {}, pumpLead: async () => {} },
  );
  const at = new Date().toISOString();
  const pending: TeammateRecord = { name: "alice", role: "helper", state: "idle", createdAtUtc: at, updatedAtUtc: at, pendingTaskId: "task-1" };
  team.workers.set("alice", { record: pending, runner: undefined, active: false, current: undefined, pokes: 0 });
  return { registry, team, remote: new RemoteTeammates(team), pending };
}

test("a look at the store while a spawn's clearing write is queued leaves the record alone: the row ends cleared", async () => {
  const { registry, team, remote, pending } = leadSpawningAlice();
  // Her first write (task pending) lands; a second teammate's write is under way when her task goes out.
  await team.persist("alice");
  const underWay = registry.holdNext();
  team.workers.set("bob", { record: { ...pending, name: "bob" }, runner: undefined, active: false, current: undefined, pokes: 0 });
  const bob = team.persist("bob");
  await underWay.reached;
  const { pendingTaskId: _sent, ...cleared } = team.workers.get("alice")!.record;
  team.workers.get("alice")!.record = cleared;
  const clearing = team.persist("alice");

  // The watch reads the rows now (hers still pending) and syncs them.
  const mark = remote.changeMark();
  remote.sync(await registry.read(), mark);
  underWay.letGo();
  await Promise.all([bob, clearing]);

  expect(team.workers.get("alice")!.record.pendingTaskId).toBeUndefined();
  expect((await registry.read()).find((row) => row.name === "alice")?.pendingTaskId).toBeUndefined();
  // Free for a worker to take.
  expect(remote.unheld()).toContain("alice");
});

test("rows read before a write of the record ended do not replace it once it ended", async () => {
  const { registry, team, remote } = leadSpawningAlice();
  await team.persist("alice");
  // A look begins (its mark taken, the row read), then her clearing write lands.
  const mark = remote.changeMark();
  const stale = await registry.read();
  const { pendingTaskId: _sent, ...cleared } = team.workers.get("alice")!.record;
  team.workers.get("alice")!.record = cleared;
  await team.persist("alice");
  remote.sync(stale, mark);
  expect(team.workers.get("alice")!.record.pendingTaskId).toBeUndefined();
  // A look begun after it ended takes the stored row as it is.
  const later = remote.changeMark();
  const row = (await registry.read()).find((r) => r.name === "alice")!;
  remote.sync([{ ...row, state: "running" }], later);
  expect(team.workers.get("alice")!.record.state).toBe("running");
});
