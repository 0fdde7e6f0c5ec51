import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { TeamContext } from "../../src/team/team-context.ts";
import { FileTeamRegistry, type RegistryFences, type TeammateRecord } from "../../src/team/team-registry.ts";
import { tempDir } from "../support/temp-dir.ts";
import { waitUntil } from "../support/deadline.ts";

/** The file registry, telling how many writes it was asked for and what each stored. */
class CountingRegistry extends FileTeamRegistry {
  readonly writes: string[][] = [];
  /** While set, a write waits for it: a write under way, for as long as the test likes. */
  hold: Promise<void> | undefined;
  override async change(put: TeammateRecord[], removed: string[], fences?: RegistryFences): Promise<string[]> {
    this.writes.push([...put.map((record) => record.name), ...removed.map((name) => `-${name}`)]);
    await this.hold;
    return super.change(put, removed, fences);
  }
}

function team(stateDir: string) {
  const registry = new CountingRegistry(stateDir);
  const context = new TeamContext(
    {
      store: new FileMailboxStore({ stateDir }),
      inbox: new EventInbox(),
      supervisor: new JobSupervisor(),
      registry,
      histories: new FileHistoryBackend(stateDir),
      makeRunner: async () => {
        throw new Error("no teammate runs in this test");
      },
      clock: systemClock,
      ids: uuidV7Source,
    },
    { startWorker: () => {}, pumpLead: async () => {} },
  );
  const add = (name: string) => {
    const now = new Date().toISOString();
    context.workers.set(name, {
      record: { name, role: "worker", state: "idle", createdAtUtc: now, updatedAtUtc: now },
      runner: undefined,
      active: false,
      current: undefined,
      pokes: 0,
    });
  };
  return { registry, context, add };
}

describe("team registry writes (group commit)", () => {
  test("teammates persisted while a write is under way are stored together by the next one, each caller once it is durable", async () => {
    const stateDir = join(tempDir("agent-group-commit-"), "state");
    const { registry, context, add } = team(stateDir);
    const names = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
    for (const name of names) add(name);
    const held = Promise.withResolvers<void>();
    registry.hold = held.promise;
    const first = context.persist("worker-0");
    // Let the first write start (it waits on the hold), then ask for the rest.
    while (registry.writes.length === 0) await Bun.sleep(1);
    const rest = names.slice(1).map(async (name) => {
      await context.persist(name);
      // Durable when it resolves: another registry reads it from the file.
      expect((await new FileTeamRegistry(stateDir).read()).map((t) => t.name)).toContain(name);
    });
    registry.hold = undefined;
    held.resolve();
    await Promise.all([first, ...rest]);
    // The first write took the first name; the seven asked for meanwhile rode on one more.
    expect(registry.writes).toEqual([["worker-0"], names.slice(1)]);
    // A teammate gone from the team is removed by the next write, with the others asked for.
    context.workers.delete("worker-3");
    context.workers.get("worker-4")!.record.state = "running";
    await Promise.all([context.persist("worker-3"), context.persist("worker-4")]);
    expect(registry.writes.at(-1)).toEqual(["worker-4", "-worker-3"]);
    expect((await registry.read()).map((t) => [t.name, t.state])).toEqual(names.filter((n) => n !== "worker-3").map((n) => [n, n === "worker-4" ? "running" : "idle"]));
  });

  test("a state already set and being written: setState resolves once that write is durable, and asks for no second one", async () => {
    const stateDir = join(tempDir("agent-group-commit-"), "state");
    const { registry, context, add } = team(stateDir);
    add("alice");
    const held = Promise.withResolvers<void>();
    registry.hold = held.promise;
    // As a spawn does for a teammate that starts on its task at once.
    context.workers.get("alice")!.record.state = "running";
    const stored = context.persist("alice");
    let settled = false;
    const running = context.setState("alice", "running").then(() => (settled = true));
    // The write is under way (held): setState, which asked for no write of its own, waits for it.
    await waitUntil(() => registry.writes.length > 0, "the held write to start");
    expect(settled).toBe(false);
    held.resolve();
    await Promise.all([stored, running]);
    expect(registry.writes).toEqual([["alice"]]);
    expect((await registry.read()).map((t) => t.state)).toEqual(["running"]);
    // Nothing under way: at once.
    await context.setState("alice", "running");
    expect(registry.writes).toHaveLength(1);
  });
});
