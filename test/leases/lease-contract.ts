import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { type LeaseHolder, LeaseLostError, type TeammateLease, type TeammateLeases, thisHolder } from "../../src/leases/teammate-leases.ts";
import { TeammateHosting } from "../../src/team/teammate-hosting.ts";

/**
 * Counts the durable writes made to a store from now on: files created or
 * replaced, or PostgreSQL transactions that changed rows. The function returned
 * says how many since.
 */
export type WriteCounter = () => Promise<() => Promise<number>>;

/** Builds a fresh leases store for one session, on the given clock, and a counter of its writes. */
export type LeasesFactory = (clock: ManualClock) => Promise<{ leases: TeammateLeases; countWrites: WriteCounter }>;

/** A holder of another machine: only its lease's end says whether it is live. */
export function remoteHolder(id: string): LeaseHolder {
  return { id, pid: 4242, host: `elsewhere-${id}`, kind: "worker" };
}

/**
 * What every TeammateLeases backend must do: one holder at a time, expiry,
 * fencing by token, release, and the live list. Registered by each backend's test file.
 */
export function leaseContract(make: LeasesFactory): void {
  const opened: { close(): Promise<void> }[] = [];
  const open = async (clock = new ManualClock()) => {
    const { leases, countWrites } = await make(clock);
    opened.push(leases);
    return { leases, clock, countWrites };
  };
  /** A runtime's hosting of `holder`'s teammates on `leases`, its lost ones told to `lost`. */
  const hosting = (leases: TeammateLeases, holder: LeaseHolder, ttlMs: number, lost: string[] = []) => {
    const hosted = new TeammateHosting({ leases, holder, ttlMs, runsTeammates: true, onLost: (name) => lost.push(name) });
    opened.unshift(hosted);
    return hosted;
  };
  const holders = (live: TeammateLease[]) => Object.fromEntries(live.map((lease) => [lease.name, lease.holder.id]));
  afterEach(async () => {
    for (const closing of opened.splice(0)) await closing.close();
  });

  test("one holder at a time: a live lease refuses another holder, and the same holder gets a new token", async () => {
    const { leases } = await open();
    const a = remoteHolder("a");
    const first = await leases.acquire("alice", a, 10_000);
    expect(first).toMatchObject({ name: "alice", holder: a });
    expect(await leases.acquire("alice", remoteHolder("b"), 10_000)).toBeNull();
    // Another teammate is free.
    expect(await leases.acquire("bob", remoteHolder("b"), 10_000)).toMatchObject({ name: "bob" });
    const again = await leases.acquire("alice", a, 10_000);
    expect(again!.token).not.toBe(first!.token);
    // The first token is fenced off by the second acquisition.
    await expect(leases.heartbeat(first!, 10_000)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await leases.live()).map((lease) => lease.name).sort()).toEqual(["alice", "bob"]);
  });

  test("acquires made at once (one group commit on files): of eight holders asking for one free name one wins, and eight names asked together are all held", async () => {
    const { leases } = await open();
    const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => leases.acquire("alice", remoteHolder(`h${i}`), 10_000)));
    const winners = taken.filter((lease) => lease !== null);
    expect(winners).toHaveLength(1);
    const names = Array.from({ length: 8 }, (_, i) => `worker-${i}`);
    const all = await Promise.all(names.map((name) => leases.acquire(name, remoteHolder("b"), 10_000)));
    expect(all.map((lease) => lease?.name)).toEqual(names);
    const live = await leases.live();
    expect(live.find((lease) => lease.name === "alice")?.token).toBe(winners[0]!.token);
    expect(live.map((lease) => lease.name).sort()).toEqual(["alice", ...names].sort());
  });

  test("an expired lease is taken by the next holder; the old holder's heartbeat then fails with LEASE_LOST and its release changes nothing", async () => {
    const { leases, clock } = await open();
    const old = (await leases.acquire("alice", remoteHolder("a"), 5_000))!;
    clock.advance(4_999);
    expect(await leases.acquire("alice", remoteHolder("b"), 5_000)).toBeNull();
    clock.advance(1);
    expect(await leases.live()).toEqual([]);
    const taken = (await leases.acquire("alice", remoteHolder("b"), 5_000))!;
    expect(taken.holder.id).toBe("b");
    const lost = await leases.heartbeat(old, 5_000).catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect((lost as LeaseLostError).code).toBe("LEASE_LOST");
    await leases.release(old);
    expect((await leases.live()).map((lease) => lease.holder.id)).toEqual(["b"]);
  });

  test("a heartbeat extends the lease from now; an expired lease nobody took can still be renewed", async () => {
    const { leases, clock } = await open();
    const lease = (await leases.acquire("alice", remoteHolder("a"), 5_000))!;
    clock.advance(4_000);
    const renewed = await leases.heartbeat(lease, 5_000);
    expect(Date.parse(renewed.leaseUntilUtc) - clock.now().getTime()).toBe(5_000);
    clock.advance(4_000);
    expect(await leases.acquire("alice", remoteHolder("b"), 5_000)).toBeNull();
    clock.advance(2_000);
    // Ran out, but nobody took it: the holder has not been replaced, it may go on.
    expect(Date.parse((await leases.heartbeat(renewed, 5_000)).leaseUntilUtc)).toBe(clock.now().getTime() + 5_000);
  });

  test("release frees the lease at once for the next holder", async () => {
    const { leases } = await open();
    const lease = (await leases.acquire("alice", remoteHolder("a"), 60_000))!;
    await leases.release(lease);
    expect(await leases.live()).toEqual([]);
    expect(await leases.acquire("alice", remoteHolder("b"), 60_000)).toMatchObject({ holder: { id: "b" } });
    await expect(leases.heartbeat(lease, 60_000)).rejects.toBeInstanceOf(LeaseLostError);
  });

  test("a holder of this host that is gone (killed with -9) holds nothing, whatever its lease's end says", async () => {
    const { leases } = await open();
    const child = Bun.spawn(["sleep", "30"], { stdout: "ignore", stderr: "ignore" });
    const dying: LeaseHolder = { ...thisHolder("worker"), id: "dying", pid: child.pid };
    delete dying.pidStart;
    expect(await leases.acquire("alice", dying, 600_000)).not.toBeNull();
    expect(await leases.acquire("alice", remoteHolder("b"), 600_000)).toBeNull();
    child.kill("SIGKILL");
    await child.exited;
    expect(await leases.live()).toEqual([]);
    expect(await leases.acquire("alice", remoteHolder("b"), 600_000)).toMatchObject({ holder: { id: "b" } });
  });

  test("a heartbeat round of a runtime holding eight leases is one durable write, and renews them all from now", async () => {
    const { leases, clock, countWrites } = await open();
    const names = Array.from({ length: 8 }, (_, i) => `mate-${i}`);
    // A minute's ttl: the hosting's own timer (a third of it, real time) stays out of the count.
    const runtime = hosting(leases, remoteHolder("a"), 60_000);
    expect(await Promise.all(names.map((name) => runtime.take(name)))).toEqual(names.map(() => true));
    clock.advance(4_000);
    const writes = await countWrites();
    await runtime.heartbeat();
    expect(await writes()).toBe(1);
    const live = await leases.live();
    expect(live.map((lease) => lease.name).sort()).toEqual(names);
    for (const lease of live) expect(Date.parse(lease.leaseUntilUtc)).toBe(clock.now().getTime() + 60_000);
    // Renewed, they outlive the ends they were taken with.
    clock.advance(58_000);
    expect(await leases.acquire("mate-3", remoteHolder("b"), 5_000)).toBeNull();
  });

  test("a stolen lease among several is reported lost with its new holder, while the others renew", async () => {
    const { leases, clock } = await open();
    const a = remoteHolder("a");
    const held = await Promise.all(["alice", "bob", "carol"].map((name) => leases.acquire(name, a, 5_000)));
    clock.advance(5_000);
    // All three ran out; bob is taken, alice and carol are not.
    const stolen = (await leases.acquire("bob", remoteHolder("b"), 5_000))!;
    const renewal = await leases.heartbeatAll(held.map((lease) => lease!), 5_000);
    expect(renewal.renewed.map((lease) => [lease.name, lease.token])).toEqual([
      ["alice", held[0]!.token],
      ["carol", held[2]!.token],
    ]);
    expect(renewal.lost.map(({ lease }) => lease.name)).toEqual(["bob"]);
    expect(renewal.lost[0]!.error).toBeInstanceOf(LeaseLostError);
    expect(renewal.lost[0]!.error.message).toContain("to worker pid 4242 on elsewhere-b");
    clock.advance(4_000);
    expect(holders(await leases.live())).toEqual({ alice: "a", bob: "b", carol: "a" });
    expect((await leases.live()).find((lease) => lease.name === "bob")!.token).toBe(stolen.token);
    // The hosting stops exactly the stolen one and keeps the others.
    const lost: string[] = [];
    const runtime = hosting(leases, remoteHolder("c"), 60_000, lost);
    expect(await Promise.all(["dave", "erin", "frank"].map((name) => runtime.take(name)))).toEqual([true, true, true]);
    clock.advance(60_000);
    await leases.acquire("erin", remoteHolder("d"), 5_000);
    await runtime.heartbeat();
    expect(lost).toEqual(["erin"]);
    expect(runtime.held().sort()).toEqual(["dave", "frank"]);
  });

  test("a holder whose heartbeats stop loses every lease it holds to another holder once they run out", async () => {
    const { leases, clock } = await open();
    const names = ["alice", "bob", "carol", "dave"];
    const held = (await Promise.all(names.map((name) => leases.acquire(name, remoteHolder("a"), 5_000)))).map((lease) => lease!);
    clock.advance(3_000);
    expect((await leases.heartbeatAll(held, 5_000)).renewed).toHaveLength(4);
    // Its last heartbeat was at 3 s: the leases hold until 8 s.
    clock.advance(4_999);
    for (const name of names) expect(await leases.acquire(name, remoteHolder("b"), 5_000)).toBeNull();
    clock.advance(1);
    const taken = await Promise.all(names.map((name) => leases.acquire(name, remoteHolder("b"), 5_000)));
    expect(taken.map((lease) => lease?.holder.id)).toEqual(["b", "b", "b", "b"]);
    for (const [i, lease] of taken.entries()) expect(lease!.token).not.toBe(held[i]!.token);
    const late = await leases.heartbeatAll(held, 5_000);
    expect(late.renewed).toEqual([]);
    expect(late.lost.map(({ lease }) => lease.name)).toEqual(names);
    expect(holders(await leases.live())).toEqual({ alice: "b", bob: "b", carol: "b", dave: "b" });
  });

  test("a lease its holder leaves out of its heartbeat rounds still runs out at its own end", async () => {
    const { leases, clock } = await open();
    const a = remoteHolder("a");
    const alice = (await leases.acquire("alice", a, 5_000))!;
    const bob = (await leases.acquire("bob", a, 5_000))!;
    clock.advance(3_000);
    await leases.heartbeatAll([alice, bob], 5_000);
    // From now on only alice is renewed (bob's release failed, say): bob ends at 8 s.
    for (let i = 0; i < 3; i++) {
      clock.advance(2_000);
      expect((await leases.heartbeatAll([alice], 5_000)).lost).toEqual([]);
    }
    expect(holders(await leases.live())).toEqual({ alice: "a" });
    expect(await leases.acquire("bob", remoteHolder("b"), 5_000)).toMatchObject({ holder: { id: "b" } });
    expect(await leases.acquire("alice", remoteHolder("b"), 5_000)).toBeNull();
  });
}
