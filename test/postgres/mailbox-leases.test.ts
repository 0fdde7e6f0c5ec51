// What the PostgreSQL mailbox adds to the contract: claims are leases — renewed
// while held, ready again when they run out — and a transition from a lease that
// is no longer current is refused (fencing). Wake-ups reach other processes
// through LISTEN/NOTIFY, with a slow poll under them.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ManualClock } from "../../src/core/clock.ts";
import { MailboxStorageError, StaleLeaseError } from "../../src/core/errors.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import { createMessage, type MailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgMailWakeups } from "../../src/postgres/mail-wakeups.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { deadline } from "../support/deadline.ts";

let cluster: Promise<PostgresCluster> | undefined;
const pools: SQL[] = [];
afterAll(async () => {
  for (const pool of pools) await pool.close().catch(() => {});
  await (await cluster)?.stop();
});

async function setup() {
  cluster ??= startPostgres();
  const url = await (await cluster).database();
  await (await PostgresConnection.open(url, { max: 1 })).close();
  const sql = new SQL(url, { max: 4 });
  pools.push(sql);
  const clock = new ManualClock("2026-03-01T12:00:00.000Z");
  const ids = new SequentialIds();
  const store = (leaseMs = 30_000) => new PgMailboxStore({ sql, session: "s1", leaseMs });
  const message = (recipient = "alice", content = "work") => {
    clock.advance(1);
    return createMessage({ sender: "lead", recipient, kind: "task", content }, { clock, ids });
  };
  return { url, sql, store, message };
}

/** Polls `check` until it holds (a lease running out is the server's clock, not ours). */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + deadline(timeoutMs);
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await Bun.sleep(20);
  }
}

/** The next claim of `agent` that finds a message (once a lease has run out). */
async function claimEventually(store: PgMailboxStore, agent = "alice"): Promise<MailboxMessage> {
  let claimed: MailboxMessage | null = null;
  await eventually(async () => {
    claimed = await store.claim(agent);
    return claimed !== null;
  });
  return claimed!;
}

describe("leases", () => {
  test("a lease that runs out makes the message claimable again; the old holder's ack is fenced off", async () => {
    const s = await setup();
    const first = s.store(200);
    const second = s.store(200);
    const sent = s.message();
    await second.send(sent);
    const held = (await first.claim("alice"))!;
    first.close(); // stops renewing, as a process that died would
    const again = await claimEventually(second);
    expect(again).toEqual(sent);
    const error = await first.ack(held).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleLeaseError);
    expect(error).toBeInstanceOf(MailboxStorageError);
    await expect(first.release(held)).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(first.quarantine(held, "late")).rejects.toBeInstanceOf(StaleLeaseError);
    expect((await second.find(sent.id))!.state).toBe("processing");
    await second.ack(again);
    expect((await second.find(sent.id))!.state).toBe("done");
    // Finished by its current holder: the stale holder's ack is now the idempotent one.
    await first.ack(held);
  });

  test("a held message is renewed while it is worked on: nobody else gets it", async () => {
    const s = await setup();
    const holder = s.store(300);
    await holder.send(s.message());
    const held = (await holder.claim("alice"))!;
    const other = s.store(300);
    const until = Date.now() + 1_200;
    while (Date.now() < until) {
      expect(await other.claim("alice")).toBeNull();
      await Bun.sleep(100);
    }
    await holder.ack(held);
    expect((await other.find(held.id))!.state).toBe("done");
  });

  test("the heartbeat outlives a finished message: the next one claimed is renewed too", async () => {
    const s = await setup();
    const holder = s.store(300);
    await holder.send(s.message("alice", "one"));
    await holder.send(s.message("alice", "two"));
    await holder.ack((await holder.claim("alice"))!);
    const held = (await holder.claim("alice"))!;
    const other = s.store(300);
    const until = Date.now() + 1_200;
    while (Date.now() < until) {
      expect(await other.claim("alice")).toBeNull();
      await Bun.sleep(100);
    }
    await holder.ack(held);
    holder.close();
  });

  test("recover voids the claims it takes back: their late release or ack is refused", async () => {
    const s = await setup();
    const a = s.store();
    await a.send(s.message("alice", "one"));
    const held = (await a.claim("alice"))!;
    expect((await s.store().recover("alice")).recovered).toEqual([{ agent: "alice", id: held.id }]);
    await expect(a.release(held)).rejects.toBeInstanceOf(StaleLeaseError);
    const fresh = s.store();
    const again = (await fresh.claim("alice"))!;
    await expect(a.ack(held)).rejects.toBeInstanceOf(StaleLeaseError);
    await fresh.ack(again);
  });

  test("ackAndClaim from a lease another store took over is fenced off as ack is, and claims nothing", async () => {
    const s = await setup();
    const first = s.store(200);
    const second = s.store(200);
    const sent = s.message("alice", "one");
    const next = s.message("alice", "two");
    await second.send(sent);
    const held = (await first.claim("alice"))!;
    first.close();
    const again = await claimEventually(second);
    expect(again.id).toBe(sent.id);
    await second.send(next);
    await expect(first.ackAndClaim(held, "alice")).rejects.toBeInstanceOf(StaleLeaseError);
    expect((await second.find(sent.id))!.state).toBe("processing");
    expect((await second.find(next.id))!.state).toBe("ready");
    expect((await second.ackAndClaim(again, "alice"))!.id).toBe(next.id);
    second.close();
  });

  test("ackAndClaim of a message whose lease ran out unclaimed acks it and never hands it out again", async () => {
    const s = await setup();
    const store = s.store(200);
    const [one, two] = [s.message("alice", "one"), s.message("alice", "two")];
    await store.send(one);
    await store.send(two);
    const held = (await store.claim("alice"))!;
    store.close();
    await eventually(async () => (await s.sql`SELECT lease_until < now() AS out FROM agent_messages WHERE id = ${one.id}`)[0].out);
    // Still this store's token: the ack holds (as ack's would), and the claim takes the next one.
    expect((await store.ackAndClaim(held, "alice"))!.id).toBe(two.id);
    expect((await store.find(one.id))!.state).toBe("done");
    expect((await store.find(two.id))!.state).toBe("processing");
    store.close();
  });

  test("a claim the same store makes while its recover finishes (woken by the recover's own notification) keeps its lease", async () => {
    const s = await setup();
    const store = s.store();
    const wakeups = new PgMailWakeups({ sql: s.sql, session: "s1" });
    try {
      // The interleaving is the server's to decide: enough rounds that a lease lost to it shows.
      for (let round = 0; round < 50; round += 1) {
        // An agent per round: a claim a late wake-up of an earlier round starts cannot take this round's message.
        const agent = `agent${round}`;
        await store.send(s.message(agent, `task ${round}`));
        await store.claim(agent);
        // As a runtime taking a teammate over does: recover, while its loop claims on the wake-up.
        // (A late wake-up of the send's finds the message still processing: nothing to claim yet.)
        const claimed = Promise.withResolvers<MailboxMessage>();
        const watch = await wakeups.watch(agent, () => void store.claim(agent).then((m) => m && claimed.resolve(m), claimed.reject));
        await store.recover(agent);
        const message = await claimed.promise;
        watch.stop();
        expect(message.content).toBe(`task ${round}`);
        await store.ack(message);
      }
    } finally {
      await wakeups.close();
      store.close();
    }
  });

  test("a row that is not a valid message is quarantined at claim, with the reason; the next one is delivered", async () => {
    const s = await setup();
    const store = s.store();
    const bad = s.message("alice", "tampered");
    const good = s.message("alice", "fine");
    await store.send(bad);
    await store.send(good);
    await s.sql`UPDATE agent_messages SET body = ${serializeMessage({ ...bad, recipient: "bob" })} WHERE id = ${bad.id}`;
    expect((await store.claim("alice"))!.content).toBe("fine");
    const found = (await store.find(bad.id))!;
    expect(found.state).toBe("quarantine");
    expect(found.reason).toContain("does not match the mailbox alice");
  });

  test("a row the schema refuses is quarantined with the schema's words", async () => {
    const s = await setup();
    const store = s.store();
    const bad = s.message("alice", "tampered");
    await store.send(bad);
    await s.sql`UPDATE agent_messages SET body = ${JSON.stringify({ ...bad, kind: "gossip", extra: 1 })} WHERE id = ${bad.id}`;
    expect(await store.claim("alice")).toBeNull();
    const found = (await store.find(bad.id))!;
    expect(found.state).toBe("quarantine");
    expect(found.reason).toStartWith("invalid message: ");
    expect(found.reason).toContain("kind: Invalid option");
    expect(found.reason).toContain("extra");
  });

  test("a claimer killed with -9 while holding a message: once its lease runs out another process gets it, once", async () => {
    const s = await setup();
    const sent = s.message("alice", "survives a kill");
    await s.store().send(sent);
    const script = `
      const { SQL } = await import("bun");
      const { PgMailboxStore } = await import(${JSON.stringify(`${import.meta.dir}/../../src/postgres/mailbox-store.ts`)});
      const store = new PgMailboxStore({ sql: new SQL(process.argv[1], { max: 1 }), session: "s1", leaseMs: 300 });
      const m = await store.claim("alice");
      console.log(JSON.stringify({ claimed: m.id }));
      setInterval(() => {}, 1000);`;
    const child = Bun.spawn([process.execPath, "-e", script, s.url], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    expect(JSON.parse(new TextDecoder().decode(value))).toEqual({ claimed: sent.id });
    child.kill("SIGKILL");
    await child.exited;
    const survivor = s.store();
    expect(await survivor.claim("alice")).toBeNull(); // still leased to the dead process
    const claimed = await claimEventually(survivor);
    expect(claimed).toEqual(sent);
    await survivor.ack(claimed);
    expect(await survivor.claim("alice")).toBeNull();
  });
});

describe("wake-ups", () => {
  test("a send from another process wakes a watcher of that agent only", async () => {
    const s = await setup();
    const wakeups = new PgMailWakeups({ sql: s.sql, session: "s1", pollMs: 60_000 });
    const woken: string[] = [];
    let resolveAlice: () => void = () => {};
    await wakeups.watch("alice", () => {
      woken.push("alice");
      resolveAlice();
    });
    await wakeups.watch("bob", () => woken.push("bob"));
    woken.length = 0; // subscribing wakes everyone once (something may have come meanwhile)
    // Made after that wake-up, so only the send's notification resolves it.
    const alice = new Promise<void>((resolve) => (resolveAlice = resolve));
    const message = s.message("alice", "ping");
    const script = `
      const { SQL } = await import("bun");
      const { PgMailboxStore } = await import(${JSON.stringify(`${import.meta.dir}/../../src/postgres/mailbox-store.ts`)});
      const sql = new SQL(process.argv[1], { max: 1 });
      await new PgMailboxStore({ sql, session: "s1" }).send(JSON.parse(process.argv[2]));
      await sql.close();`;
    const child = Bun.spawn([process.execPath, "-e", script, s.url, JSON.stringify(message)], { stderr: "inherit" });
    expect(await child.exited).toBe(0);
    await alice;
    expect(woken).toEqual(["alice"]);
    expect((await s.store().claim("alice"))!.id).toBe(message.id);
    await wakeups.close();
  });

  test("a row that arrived without a notification is found by the slow poll", async () => {
    const s = await setup();
    const wakeups = new PgMailWakeups({ sql: s.sql, session: "s1", pollMs: 100 });
    let wakes = 0;
    await wakeups.watch("alice", () => (wakes += 1));
    const before = wakes;
    await eventually(async () => wakes >= before + 2);
    await wakeups.close();
    const after = wakes;
    // A second watcher on the same poll: by its third poll the closed one would have polled (and woken) too.
    const witness = new PgMailWakeups({ sql: s.sql, session: "s1", pollMs: 100 });
    let witnessed = 0;
    await witness.watch("alice", () => (witnessed += 1));
    const start = witnessed;
    await eventually(async () => witnessed >= start + 3);
    await witness.close();
    expect(wakes).toBe(after);
  });
});
