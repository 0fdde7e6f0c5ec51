// A Lead's look at the teammates other processes run is several store queries
// long; the team watch may take one of them over meanwhile (its holder was
// killed with -9). That teammate runs here from then on: the look that ends
// after the takeover must not count it as busy elsewhere, or `agent drain`
// waits for ever (the watch, with nothing left elsewhere, stops and never looks
// again). Nor may a look made while the takeover is under way (held here, its
// loop not started yet) find the team quiet. Barriers, not sleeps: the store's
// listing or recovery is held at the chosen point.
import { afterEach, expect, test } from "bun:test";
import type { AgentName } from "../../src/core/agent-name.ts";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { thisHolder } from "../../src/leases/teammate-leases.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import type { AgentMailboxListing, ListOptions, RecoverResult } from "../../src/mailbox/store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { RemoteTeammates } from "../../src/team/remote-teammates.ts";
import { TeamContext } from "../../src/team/team-context.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { TeammateHosting } from "../../src/team/teammate-hosting.ts";
import { tempDir } from "../support/temp-dir.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A file store whose next listing (once read) or recovery (before it starts) waits until let go. */
class HeldStore extends FileMailboxStore {
  readonly #holds = new Map<"list" | "recover", { reached: () => void; until: Promise<void> }>();

  /** Holds the next `op`: `reached` resolves when it is held, `letGo()` lets it go on. */
  holdNext(op: "list" | "recover"): { reached: Promise<void>; letGo: () => void } {
    const reached = Promise.withResolvers<void>();
    const until = Promise.withResolvers<void>();
    this.#holds.set(op, { reached: reached.resolve, until: until.promise });
    return { reached: reached.promise, letGo: until.resolve };
  }

  async #held(op: "list" | "recover"): Promise<void> {
    const hold = this.#holds.get(op);
    this.#holds.delete(op);
    if (!hold) return;
    hold.reached();
    await hold.until;
  }

  override async list(options?: ListOptions): Promise<AgentMailboxListing[]> {
    const listings = await super.list(options);
    await this.#held("list");
    return listings;
  }

  override async recover(agent: AgentName): Promise<RecoverResult> {
    await this.#held("recover");
    return super.recover(agent);
  }
}

/** A Lead's team beside a killed worker: alice "running", her task waiting (unless `withTask` is false), no live lease. */
async function teamAfterKilledWorker({ withTask = true } = {}) {
  const dir = tempDir("agent-remote-teammates-");
  const store = new HeldStore({ stateDir: dir });
  const registry = new FileTeamRegistry(dir);
  const at = new Date().toISOString();
  await registry.put({ name: "alice", role: "helper", state: "running", createdAtUtc: at, updatedAtUtc: at });
  if (withTask) await store.send(createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "count the tables" }, { clock: systemClock, ids: uuidV7Source }));
  const leases = new FileTeammateLeases(dir);
  const hosting = new TeammateHosting({ leases, holder: thisHolder("lead"), ttlMs: 60_000, runsTeammates: true, onLost: () => {} });
  closers.push(() => hosting.close());
  const started: AgentName[] = [];
  const team = new TeamContext(
    {
      store,
      inbox: new EventInbox(),
      supervisor: new JobSupervisor(),
      registry,
      histories: new FileHistoryBackend(dir),
      makeRunner: () => Promise.reject(new Error("no teammate runs in this test")),
      hosting,
      clock: systemClock,
      ids: uuidV7Source,
    },
    { startWorker: (name) => void started.push(name), pumpLead: async () => {} },
  );
  const remote = new RemoteTeammates(team);
  remote.sync(await registry.read());
  return { store, registry, leases, team, remote, started };
}

test("a teammate taken over while the Lead looks at the ones run elsewhere is not counted as busy elsewhere once it runs here", async () => {
  const { store, remote, started } = await teamAfterKilledWorker();
  // Not held here, with work: busy elsewhere.
  expect(await remote.refreshElsewhere()).toBe(true);
  expect(remote.busyElsewhere).toBe(true);

  // A look that has read her work when the takeover happens.
  const listing = store.holdNext("list");
  const looking = remote.refreshElsewhere();
  await listing.reached;
  expect(await remote.adopt("alice")).toBe(true);
  expect(started).toEqual(["alice"]);
  listing.letGo();

  // Her work is this process's now (her loop's): nothing is busy elsewhere.
  expect(await looking).toBe(false);
  expect(remote.busyElsewhere).toBe(false);
});

test("a teammate being taken over is pending work until its loop runs here, even to a look made meanwhile", async () => {
  const { store, remote, started } = await teamAfterKilledWorker();
  // Held here already, her loop not started: a look now must not find the team quiet.
  const recovery = store.holdNext("recover");
  const adopting = remote.adopt("alice");
  await recovery.reached;
  expect(await remote.refreshElsewhere()).toBe(true);
  expect(remote.busyElsewhere).toBe(true);
  recovery.letGo();
  expect(await adopting).toBe(true);
  expect(started).toEqual(["alice"]);
  expect(await remote.refreshElsewhere()).toBe(false);
});

test("a takeover that does not happen (another live holder) wakes whoever waits for a change", async () => {
  const { leases, team, remote, started } = await teamAfterKilledWorker();
  expect(await leases.acquire("alice", { id: "elsewhere:4242:w", pid: 4242, host: "elsewhere", kind: "worker" }, 60_000)).not.toBeNull();
  let woke = false;
  void team.nextChange().then(() => {
    woke = true;
  });
  expect(await remote.adopt("alice")).toBe(false);
  expect(woke).toBe(true);
  expect(started).toEqual([]);
  // Still hers elsewhere, with work.
  expect(await remote.refreshElsewhere()).toBe(true);
});

test("a teammate left running with an empty mailbox (its holder killed just after its last ack) is taken over and stored idle", async () => {
  const { registry, remote, started } = await teamAfterKilledWorker({ withTask: false });
  expect(remote.unheld()).toEqual(["alice"]);
  expect(await remote.adopt("alice")).toBe(true);
  expect(started).toEqual(["alice"]);
  // Its loop finds nothing to do and stores nothing: the takeover itself says idle.
  expect((await registry.read()).map((record) => record.state)).toEqual(["idle"]);
  expect(await remote.refreshElsewhere()).toBe(false);
});

test("a takeover goes by the record as stored once the lease is taken: one its last holder shut down after the look is not run", async () => {
  const { registry, team, remote, started } = await teamAfterKilledWorker();
  // The look read her running; her holder's last write, after it, shut her down (then it was killed).
  const [alice] = await registry.read();
  await registry.put({ ...alice!, state: "shutdown" });
  expect(remote.unheld()).toEqual(["alice"]);
  expect(await remote.adopt("alice")).toBe(false);
  expect(started).toEqual([]);
  expect(team.workers.get("alice")?.record.state).toBe("shutdown");
  // Her lease is given back, her record left as her holder stored it.
  expect(team.runsHere("alice")).toBe(false);
  expect((await registry.read()).map((record) => record.state)).toEqual(["shutdown"]);
});
