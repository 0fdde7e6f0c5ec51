// Real processes killed with SIGKILL in the middle of sends, claims, acks and
// releases: afterwards every message is in exactly one state, whole, and none is
// lost; recover (after the dead holder's lock went stale) and a drain finish them all.
// The chaos test runs on both backends (files, PostgreSQL); the kill points inside
// file-system calls and the lock's staleness are the file store's own.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { systemClock } from "../../src/core/clock.ts";
import { LockError } from "../../src/core/errors.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { DEFAULT_STALE_MS } from "../../src/storage/file-lock.ts";
import {
  type Census,
  type DyingOp,
  duplicatesIn,
  errorsOf,
  idsIn,
  idsOf,
  censusOf,
  startWorker,
  takeCensus,
  type Worker,
  type WorkerEvent,
} from "../fixtures/mailbox-worker.ts";
import { tempDir } from "../support/temp-dir.ts";
import { openStoreAt } from "../fixtures/mailbox-place.ts";
import { mailboxBackends } from "./backends.ts";

const AGENTS = ["alice", "bob", "carol"];
// Shorter than the store's default so rounds that end with a dead holder's lock
// do not each wait the full default; the default has a test of its own below.
const STALE_MS = 2_000;
const ROUNDS = 4;
const WORKERS_PER_ROUND = 4;
const started: Worker[] = [];

/** Where the message may be when the process died inside each op (send: nowhere, if before the link). */
const STATES_AFTER_DEATH_IN: Record<DyingOp, string[]> = {
  send: ["ready"],
  claim: ["ready", "processing"],
  ack: ["processing", "done"],
  release: ["processing", "ready"],
};

afterEach(async () => {
  for (const worker of started.splice(0)) {
    worker.child.kill("SIGKILL");
    await worker.finished;
  }
});

/** Which call a killed worker was in: the announcement it printed last, if that call never returned. */
function killedDuring(worker: Worker): string {
  const last: WorkerEvent | undefined = worker.events.at(-1);
  if (last?.sending) return "send";
  if (last?.claiming) return "claim";
  if (last?.acking) return "ack";
  if (last?.releasing) return "release";
  return "between calls";
}

/** Lets the worker complete one call (it may first wait out a lock a killed one left), then kills it a little later. */
async function killSoon(worker: Worker): Promise<void> {
  await worker.waitFor((e) => Boolean(e.sent ?? e.claimed ?? e.acked ?? e.released));
  await sleep(5 + Math.random() * 300);
  worker.child.kill("SIGKILL");
  const end = await worker.finished;
  expect(end).toMatchObject({ signalCode: "SIGKILL" });
}

/** The invariants that hold whatever moment the workers died at. */
function expectWholeAndUnique(census: Census, sent: Map<string, WorkerEvent>, announced: Set<string>): void {
  // No torn or half-written file anywhere, and nothing a claim had to quarantine.
  expect(census.invalid).toEqual([]);
  expect(census.quarantined).toEqual([]);
  expect(duplicatesIn(census)).toEqual([]);
  // Every send that returned is there, with what was sent, in its recipient's mailbox.
  const lost = [...sent.keys()].filter((id) => !census.byId.has(id));
  expect(lost).toEqual([]);
  for (const [id, event] of sent) {
    const [place] = census.byId.get(id)!;
    expect({ agent: place!.agent, content: place!.message.content }).toEqual({ agent: event.to!, content: event.content! });
  }
  // Everything on disk was at least announced (an interrupted send may or may not have landed),
  // and every message has its id marker.
  expect([...census.byId.keys()].filter((id) => !announced.has(id))).toEqual([]);
  if (census.markers) expect([...census.byId.keys()].filter((id) => !census.markers!.has(id))).toEqual([]);
}

for (const backend of mailboxBackends()) {
  describe(`${backend.name} store under SIGKILL`, () => {
    test(
      "chaos workers killed at random points: nothing lost, duplicated or torn; recover and a drain finish everything",
      async () => {
        const place = await backend.place();
        const lockPath = join(place, "mailboxes.lock");
        const workers: Worker[] = [];
        let roundsEndingWithStaleLock = 0;
        for (let round = 0; round < ROUNDS; round++) {
          const batch = Array.from({ length: WORKERS_PER_ROUND }, (_, i) =>
            startWorker("chaos", place, { tag: `r${round}w${i}`, agents: AGENTS, staleMs: STALE_MS }),
          );
          started.push(...batch);
          workers.push(...batch);
          await Promise.all(batch.map(killSoon));
          if (backend.name === "file" && existsSync(lockPath)) roundsEndingWithStaleLock += 1;
        }
        expect(errorsOf(workers)).toEqual([]);

        const sent = new Map(workers.flatMap((w) => w.events.filter((e) => e.sent).map((e) => [e.sent!, e] as const)));
        const announced = new Set(idsOf(workers, "sending"));
        const acked = idsOf(workers, "acked");
        const before = await censusOf(place);
        expectWholeAndUnique(before, sent, announced);
        // An ack that returned is final.
        expect(acked.filter((id) => before.byId.get(id)?.[0]?.state !== "done")).toEqual([]);

        // A fresh store, as after a restart. The file lock (flock) died with its
        // holder; the dead workers' PostgreSQL leases are taken back by recover
        // whatever their age.
        const opened = backend.name === "file" ? { store: new FileMailboxStore({ stateDir: place, lock: { staleMs: STALE_MS } }), close: async () => {} } : openStoreAt(place);
        const { store } = opened;
        const recovered: string[] = [];
        for (const agent of AGENTS) {
          const result = await store.recover(agent);
          expect(result.skipped).toEqual([]);
          recovered.push(...result.recovered.map((r) => r.id));
        }
        expect(recovered.sort()).toEqual(idsIn(before, "processing").sort());
        const afterRecover = await censusOf(place);
        expectWholeAndUnique(afterRecover, sent, announced);
        expect(idsIn(afterRecover, "processing")).toEqual([]);
        expect(idsIn(afterRecover, "ready").sort()).toEqual(idsIn(before, "ready", "processing").sort());

        const drained: string[] = [];
        for (const agent of AGENTS) {
          for (let message = await store.claim(agent); message; message = await store.claim(agent)) {
            drained.push(message.id);
            await store.ack(message);
          }
        }
        expect(drained.sort()).toEqual(idsIn(afterRecover, "ready").sort());
        const after = await censusOf(place);
        expectWholeAndUnique(after, sent, announced);
        expect(idsIn(after, "ready", "processing")).toEqual([]);
        expect(idsIn(after, "done").sort()).toEqual([...before.byId.keys()].sort());

        const summary: Record<string, number> = {};
        for (const worker of workers) summary[killedDuring(worker)] = (summary[killedDuring(worker)] ?? 0) + 1;
        console.log(
          `crash (${backend.name}): ${workers.length} workers killed (${JSON.stringify(summary)}), ${sent.size} sends returned, ` +
            `${announced.size - sent.size} interrupted (${[...announced].filter((id) => !sent.has(id) && before.byId.has(id)).length} landed), ` +
            `${acked.length} acks, ${recovered.length} recovered, ${drained.length} drained, ` +
            `${roundsEndingWithStaleLock} rounds left a stale lock, ${(before.markers?.size ?? before.byId.size) - before.byId.size} orphan id markers`,
        );
        // The kills did land inside store calls, not only between them.
        expect(workers.length - (summary["between calls"] ?? 0)).toBeGreaterThan(0);
        await opened.close();
      },
      90_000,
    );
  });
}

describe("FileMailboxStore under SIGKILL", () => {
  test(
    "killed just before each file-system call of a batch of 3 sends, claims or acks made at once: each message in one state, whole; recover finishes them",
    async () => {
      for (const op of ["send", "claim", "ack"] as const) {
        for (let nth = 1; ; nth++) {
          const stateDir = tempDir("agent-mailbox-die-batch-");
          const worker = startWorker("die-at", stateDir, { agent: "alice", op, nth, batch: 3, staleMs: STALE_MS });
          started.push(worker);
          const end = await worker.finished;
          expect(errorsOf([worker])).toEqual([]);
          const ids = worker.events.find((e) => e.messages)!.messages!;
          const census = takeCensus(stateDir);
          expect(census.invalid).toEqual([]);
          expect(census.quarantined).toEqual([]);
          expect(duplicatesIn(census)).toEqual([]);
          for (const id of ids) {
            const states = (census.byId.get(id) ?? []).map((p) => p.state);
            if (op === "send" && states.length === 0) continue;
            expect(states).toHaveLength(1);
            expect(STATES_AFTER_DEATH_IN[op]).toContain(states[0]!);
          }
          const store = new FileMailboxStore({ stateDir, lock: { staleMs: STALE_MS } });
          expect((await store.recover("alice")).skipped).toEqual([]);
          for (let message = await store.claim("alice"); message; message = await store.claim("alice")) await store.ack(message);
          const after = takeCensus(stateDir);
          expect(idsIn(after, "ready", "processing")).toEqual([]);
          for (const id of ids) if (op !== "send" || census.byId.has(id)) expect(idsIn(after, "done")).toContain(id);
          if (end.exitCode === 0) break;
          expect(end.signalCode).toBe("SIGKILL");
        }
      }
    },
    120_000,
  );

  test(
    "killed just before each file-system call of send, claim, ack and release: one state, whole; recover finishes it",
    async () => {
      // Every kill point of every op, each in its own state dir; the four ops in parallel.
      const chains = await Promise.all(
        (["send", "claim", "ack", "release"] as const).map(async (op) => {
          const points: { op: DyingOp; nth: number; stateDir: string; id: string; dying: string }[] = [];
          for (let nth = 1; ; nth++) {
            const stateDir = tempDir("agent-mailbox-die-");
            const worker = startWorker("die-at", stateDir, { agent: "alice", op, nth, staleMs: STALE_MS });
            started.push(worker);
            const end = await worker.finished;
            expect(errorsOf([worker])).toEqual([]);
            const last = worker.events.at(-1);
            if (end.exitCode === 0) {
              expect(last).toEqual({ completed: op, calls: nth - 1 });
              return points;
            }
            expect(end.signalCode).toBe("SIGKILL");
            expect(last?.dying).toBeString();
            points.push({ op, nth, stateDir, id: worker.events.find((e) => e.message)!.message!, dying: last!.dying! });
          }
        }),
      );
      const points = chains.flat();

      const seen: Record<DyingOp, string[]> = { send: [], claim: [], ack: [], release: [] };
      for (const { op, stateDir, id, dying } of points) {
        const census = takeCensus(stateDir);
        expect(census.invalid).toEqual([]);
        expect(census.quarantined).toEqual([]);
        const states = (census.byId.get(id) ?? []).map((p) => p.state);
        seen[op].push(`${dying}:${states.join("+") || "-"}`);
        if (op !== "send" || states.length > 0) {
          expect(states).toHaveLength(1);
          expect(STATES_AFTER_DEATH_IN[op]).toContain(states[0]!);
          expect(census.markers!.has(id)).toBe(true);
        }
      }
      // The dead process held the lock in every case; the kernel gave it back when the
      // process died, so each recovery starts at once.
      await Promise.all(
        points.map(async ({ op, stateDir, id }) => {
          const store = new FileMailboxStore({ stateDir, lock: { staleMs: STALE_MS } });
          expect((await store.recover("alice")).skipped).toEqual([]);
          for (let message = await store.claim("alice"); message; message = await store.claim("alice")) {
            await store.ack(message);
          }
          const census = takeCensus(stateDir);
          expect(census.invalid).toEqual([]);
          expect(census.quarantined).toEqual([]);
          expect(idsIn(census, "ready", "processing")).toEqual([]);
          expect(idsIn(census, "done")).toEqual(op === "send" && !census.byId.has(id) ? [] : [id]);
        }),
      );
      console.log(
        `killed before each call (call:state after the kill)\n${Object.entries(seen).map(([op, list]) => `  ${op}: ${list.join(" ")}`).join("\n")}`,
      );
      // The sweep crossed each op's point of no return: both outcomes were seen.
      expect(seen.send.some((s) => s.endsWith(":-")) && seen.send.some((s) => s.endsWith(":ready"))).toBe(true);
      for (const op of ["claim", "ack", "release"] as const) {
        for (const state of STATES_AFTER_DEATH_IN[op]) expect(seen[op].some((s) => s.endsWith(`:${state}`))).toBe(true);
      }
    },
    60_000,
  );

  test(
    "flock: while its holder lives nobody else gets in and the error names it; killed, the lock is free at once",
    async () => {
      const stateDir = tempDir("agent-mailbox-crash-");
      const message = createMessage(
        { sender: "lead", recipient: "alice", kind: "task", content: "after the crash" },
        { clock: systemClock, ids: uuidV7Source },
      );
      const holder = startWorker("hold-lock", stateDir, { mechanism: "os" });
      started.push(holder);
      await holder.waitFor((e) => e.locked !== undefined);

      const impatient = new FileMailboxStore({ stateDir, lock: { waitMs: 300 } });
      const refused = await impatient.send(message).catch((e) => e);
      expect(refused).toBeInstanceOf(LockError);
      expect(refused.message).toContain(`pid ${holder.child.pid}`);

      holder.child.kill("SIGKILL");
      expect(await holder.finished).toMatchObject({ signalCode: "SIGKILL" });
      // No staleness to wait out and nothing to break: the kernel dropped the lock.
      const store = new FileMailboxStore({ stateDir, lock: { waitMs: 1_000 } });
      await store.send(message);
      const claimed = await store.claim("alice");
      expect(claimed).toEqual(message);
      await store.ack(claimed!);
      expect(idsIn(takeCensus(stateDir), "done")).toEqual([message.id]);
      expect(existsSync(join(stateDir, "mailboxes.lock"))).toBe(false);
    },
    30_000,
  );

  test(
    "flock: processes racing for it at the same instant go in one at a time",
    async () => {
      const violations: string[] = [];
      for (let trial = 0; trial < 3; trial++) {
        const stateDir = tempDir("agent-mailbox-crash-");
        const startAt = Date.now() + 700;
        const batch = Array.from({ length: 6 }, () => startWorker("exclusive", stateDir, { startAt, mechanism: "os" }));
        started.push(...batch);
        await Promise.all(batch.map((w) => w.finished));
        violations.push(
          ...errorsOf(batch).map((e) => `trial ${trial}: ${e}`),
          ...batch.flatMap((w) => w.events.filter((e) => e.overlap).map((e) => `trial ${trial}: pid ${e.overlap} got in while another holder was inside`)),
        );
        expect(batch.flatMap((w) => w.events.filter((e) => e.entered))).toHaveLength(6);
      }
      expect(violations).toEqual([]);
    },
    60_000,
  );

  test(
    "the lock directory left by a process killed while holding it is broken at once: its owner is a dead pid of this host",
    async () => {
      const stateDir = tempDir("agent-mailbox-crash-");
      const lockPath = join(stateDir, "mailboxes.lock");
      const message = createMessage(
        { sender: "lead", recipient: "alice", kind: "task", content: "after the crash" },
        { clock: systemClock, ids: uuidV7Source },
      );
      const holder = startWorker("hold-lock", stateDir, { mechanism: "dir" });
      started.push(holder);
      await holder.waitFor((e) => e.locked !== undefined);

      // While the holder lives the lock is really held: nobody else gets in, and
      // the error names the holder.
      const impatient = new FileMailboxStore({ stateDir, lock: { waitMs: 300, mechanism: "dir" } });
      const refused = await impatient.send(message).catch((e) => e);
      expect(refused).toBeInstanceOf(LockError);
      expect(refused.message).toContain(`pid ${holder.child.pid}`);

      holder.child.kill("SIGKILL");
      expect(await holder.finished).toMatchObject({ signalCode: "SIGKILL" });
      expect(existsSync(lockPath)).toBe(true);

      // The store's default threshold, as users get it: the dead holder is seen
      // for what it is and its lock broken well before it would go stale.
      const store = new FileMailboxStore({ stateDir, lock: { mechanism: "dir" } });
      const before = Date.now();
      await store.send(message);
      expect(Date.now() - before).toBeLessThan(DEFAULT_STALE_MS);
      expect(existsSync(lockPath)).toBe(false);
      const claimed = await store.claim("alice");
      expect(claimed).toEqual(message);
      await store.ack(claimed!);
      expect(idsIn(takeCensus(stateDir), "done")).toEqual([message.id]);
    },
    30_000,
  );

  test(
    "a lock whose holder cannot be checked (another host) is broken only once it went stale",
    async () => {
      const stateDir = tempDir("agent-mailbox-crash-");
      const lockPath = join(stateDir, "mailboxes.lock");
      const holder = startWorker("hold-lock", stateDir, { staleMs: STALE_MS, mechanism: "dir" });
      started.push(holder);
      await holder.waitFor((e) => e.locked !== undefined);
      holder.child.kill("SIGKILL");
      await holder.finished;
      // As if the holder ran on another machine sharing the state dir.
      const ownerFile = join(lockPath, "owner.json");
      const owner = JSON.parse(readFileSync(ownerFile, "utf8"));
      writeFileSync(ownerFile, JSON.stringify({ ...owner, host: `${owner.host}-elsewhere` }));
      const lastRefreshMs = Math.floor(statSync(lockPath).mtimeMs);

      const store = new FileMailboxStore({ stateDir, lock: { staleMs: STALE_MS, mechanism: "dir" } });
      await store.send(
        createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock: systemClock, ids: uuidV7Source }),
      );
      expect(Date.now()).toBeGreaterThanOrEqual(lastRefreshMs + STALE_MS);
      expect(existsSync(lockPath)).toBe(false);
    },
    30_000,
  );

  test(
    "a dead holder's stale lock found by several waiting processes at once still lets them in one at a time",
    async () => {
      const trials = 5;
      const racers = 6;
      const violations: string[] = [];
      for (let trial = 0; trial < trials; trial++) {
        const stateDir = tempDir("agent-mailbox-crash-");
        const lockPath = join(stateDir, "mailboxes.lock");
        const holder = startWorker("hold-lock", stateDir, { mechanism: "dir" });
        started.push(holder);
        await holder.waitFor((e) => e.locked !== undefined);
        holder.child.kill("SIGKILL");
        await holder.finished;
        // As if it died long ago: stale now, so the waiters find it stale together
        // instead of one by one as their retries come round.
        const longAgo = (Date.now() - 10_000) / 1000;
        utimesSync(lockPath, longAgo, longAgo);
        const startAt = Date.now() + 700;
        const batch = Array.from({ length: racers }, () =>
          startWorker("exclusive", stateDir, { startAt, staleMs: STALE_MS, mechanism: "dir" }),
        );
        started.push(...batch);
        await Promise.all(batch.map((w) => w.finished));
        violations.push(
          ...errorsOf(batch).map((e) => `trial ${trial}: ${e}`),
          ...batch.flatMap((w) => w.events.filter((e) => e.overlap).map((e) => `trial ${trial}: pid ${e.overlap} got the lock while another holder was inside`)),
        );
        // Each racer got as far as the lock: in, overlapping, or failing.
        for (const w of batch) expect(w.events.some((e) => e.entered ?? e.overlap ?? e.error)).toBe(true);
      }
      expect(violations).toEqual([]);
    },
    60_000,
  );
});
