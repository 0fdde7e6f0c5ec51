import { afterEach, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { type LeaseHolder, LeaseLostError, type TeammateLeases, thisHolder } from "../../src/leases/teammate-leases.ts";

/** Builds a fresh leases store for one session, on the given clock. */
export type LeasesFactory = (clock: ManualClock) => Promise<TeammateLeases>;

/** A holder of another machine: only its lease's end says whether it is live. */
export function remoteHolder(id: string): LeaseHolder {
  return { id, pid: 4242, host: `elsewhere-${id}`, kind: "worker" };
}

/**
 * What every TeammateLeases backend must do: one holder at a time, expiry,
 * fencing by token, release, and the live list. Registered by each backend's test file.
 */
export function leaseContract(make: LeasesFactory): void {
  const opened: TeammateLeases[] = [];
  const open = async (clock = new ManualClock()) => {
    const leases = await make(clock);
    opened.push(leases);
    return { leases, clock };
  };
  afterEach(async () => {
    for (const leases of opened.splice(0)) await leases.close();
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
}
