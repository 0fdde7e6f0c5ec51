// The team watch on a real PostgreSQL cluster, woken by NOTIFY: with a safety
// poll of a minute, a teammate stored, removed or given up (its lease released)
// and mail for one of the session's agents each bring a look at once — and
// another session's changes do not.
import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { AgentName } from "../../src/core/agent-name.ts";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { thisHolder } from "../../src/leases/teammate-leases.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { PgTeamWakeups } from "../../src/postgres/team-wakeups.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import type { TeammateRecord } from "../../src/team/team-registry.ts";
import { TeammateHosting } from "../../src/team/teammate-hosting.ts";
import { type TeamWatchTarget, watchTeam } from "../../src/team/team-watch.ts";
import { clusterForFile } from "../support/postgres.ts";

const pg = clusterForFile();
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const AT = "2026-11-30T10:00:00.000Z";
const record = (name: string): TeammateRecord => ({ name, role: "helper", state: "idle", createdAtUtc: AT, updatedAtUtc: AT });

/** A worker-side target that records each look (what the registry held then) and lets a test wait for the next. */
class Looks implements TeamWatchTarget {
  readonly role = "worker" as const;
  readonly needsWatch = true;
  readonly seen: string[][] = [];
  #waiters: { count: number; resolve: () => void }[] = [];

  changeMark(): number {
    return 0;
  }
  sync(stored: TeammateRecord[]): void {
    this.seen.push(stored.map((r) => r.name));
    for (const waiter of this.#waiters.filter((w) => this.seen.length >= w.count)) waiter.resolve();
  }
  unheld(): AgentName[] {
    return [];
  }
  async adopt(): Promise<boolean> {
    return false;
  }
  pokeHeld(): void {}
  async refreshElsewhere(): Promise<boolean> {
    return false;
  }
  async pumpLead(): Promise<void> {}

  /** Resolves once there have been `count` looks. */
  reached(count: number): Promise<void> {
    if (this.seen.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
}

async function watching(session: string) {
  const url = await pg().database();
  // The watching process's connection, and another process's.
  const here = await PostgresConnection.open(url, { max: 2 });
  const there = new SQL(url, { max: 2 });
  const wakeups = new PgTeamWakeups({ sql: here.sql, session });
  const hosting = new TeammateHosting({
    leases: new PgTeammateLeases({ sql: here.sql, session }),
    holder: thisHolder("worker"),
    ttlMs: 60_000,
    runsTeammates: false,
    onLost: () => {},
  });
  const looks = new Looks();
  const stop = new AbortController();
  const errors: unknown[] = [];
  const watch = watchTeam(
    looks,
    { registry: new PgTeamRegistry(here.sql, session), hosting, everyMs: 60_000, wakeups: { source: wakeups, everyMs: 60_000 }, onError: (e) => errors.push(e) },
    stop.signal,
  );
  closers.push(async () => {
    stop.abort();
    await watch;
    await hosting.close();
    await wakeups.close();
    await here.close();
    await there.close();
    expect(errors).toEqual([]);
  });
  await looks.reached(1);
  return { looks, there };
}

describe("the team watch with PostgreSQL wake-ups (the safety poll a minute away)", () => {
  test("a teammate stored or removed by another process brings a look at once; another session's change does not", async () => {
    const { looks, there } = await watching("s1");
    expect(looks.seen).toEqual([[]]);
    // Notified in commit order on one connection: s2's arrives first and must not wake it.
    await new PgTeamRegistry(there, "s2").put(record("zed"));
    await new PgTeamRegistry(there, "s1").put(record("alice"));
    await looks.reached(2);
    expect(looks.seen).toEqual([[], ["alice"]]);
    await new PgTeamRegistry(there, "s1").remove("alice");
    await looks.reached(3);
    expect(looks.seen).toEqual([[], ["alice"], []]);
  });

  test("a lease given up and mail for an agent of the session bring a look", async () => {
    const { looks, there } = await watching("s3");
    const leases = new PgTeammateLeases({ sql: there, session: "s3" });
    const lease = await leases.acquire("bob", thisHolder("worker"), 60_000);
    await leases.release(lease!);
    await looks.reached(2);

    const mailbox = new PgMailboxStore({ sql: there, session: "s3" });
    closers.push(() => mailbox.close());
    await mailbox.send(createMessage({ sender: "lead", recipient: "bob", kind: "task", content: "go" }, { clock: systemClock, ids: uuidV7Source }));
    await looks.reached(3);
    expect(looks.seen).toHaveLength(3);
  });
});
