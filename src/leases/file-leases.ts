import { renameSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { ensureDir, fsyncDirOffLoop, namesIn, tempPathFor, unlinkQuietly, writeFileAtomicOffLoop, writeNewFileDurably } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { readStateFile } from "../storage/state-file.ts";
import { type LeaseHolder, LeaseLostError, TeammateLease, type TeammateLeases, freshLease, isLive } from "./teammate-leases.ts";

/**
 * Teammate leases as files, `<session>/leases/<name>.json`, for runtimes and
 * workers of one machine (or of machines sharing the state dir): every change is
 * a read-check-write under `leases/.lock`, so two takers of a free lease never
 * both win, and a write is an atomic rename, so a reader never sees half a lease.
 *
 * Acquires made at once (a Lead spawning 32 teammates in one reply) are one
 * take of the lock (group commit): each is checked, its file written and fsynced
 * in parallel with the others and renamed, then the directory fsynced once, and
 * only then does any of them return. One after another they cost a lock and two
 * fsyncs each: ~4 ms a teammate on the spawn path.
 */
export class FileTeammateLeases implements TeammateLeases {
  readonly dir: string;
  readonly #lock: string;
  readonly #clock: Clock;
  readonly #acquires: PendingAcquire[] = [];

  constructor(sessionDir: string, options: { clock?: Clock } = {}) {
    this.dir = join(sessionDir, "leases");
    this.#lock = join(this.dir, ".lock");
    this.#clock = options.clock ?? systemClock;
  }

  acquire(name: AgentName, holder: LeaseHolder, ttlMs: number): Promise<TeammateLease | null> {
    return new Promise((resolve, reject) => {
      // The first call waiting starts a take of the lock; the calls made before
      // it is granted ride on it.
      if (this.#acquires.push({ name, holder, ttlMs, resolve, reject }) === 1) this.#takeWaiting();
    });
  }

  #takeWaiting(): void {
    let batch: PendingAcquire[] = [];
    this.#locked(async () => {
      batch = this.#acquires.splice(0);
      await this.#acquireAll(batch);
    }).catch((error: unknown) => {
      // The lock itself failed: no call of the batch was answered yet.
      if (batch.length === 0) batch = this.#acquires.splice(0);
      for (const call of batch) call.reject(error);
    });
  }

  /** Under the lock: answers every call of `batch`, a granted one only once its lease is durable. */
  async #acquireAll(batch: PendingAcquire[]): Promise<void> {
    const now = this.#clock.now();
    // A name asked for twice in one batch sees the lease the first call took.
    const granted = new Map<string, TeammateLease>();
    const writes: { call: PendingAcquire; lease: TeammateLease; temp: string }[] = [];
    for (const call of batch) {
      const current = granted.get(call.name) ?? this.#read(call.name);
      if (current && current.holder.id !== call.holder.id && isLive(current, now)) {
        call.resolve(null);
        continue;
      }
      const lease = freshLease(call.name, call.holder, now, call.ttlMs);
      granted.set(call.name, lease);
      writes.push({ call, lease, temp: tempPathFor(this.#file(call.name)) });
    }
    if (writes.length === 0) return;
    const synced = await Promise.allSettled(writes.map(({ lease, temp }) => writeNewFileDurably(temp, `${JSON.stringify(TeammateLease.parse(lease))}\n`)));
    const renamed: typeof writes = [];
    writes.forEach((write, i) => {
      const result = synced[i]!;
      try {
        if (result.status === "rejected") throw result.reason;
        renameSync(write.temp, this.#file(write.lease.name));
        renamed.push(write);
      } catch (error) {
        unlinkQuietly(write.temp);
        write.call.reject(error);
      }
    });
    if (renamed.length === 0) return;
    try {
      await fsyncDirOffLoop(this.dir);
    } catch (error) {
      for (const { call } of renamed) call.reject(error);
      return;
    }
    for (const { call, lease } of renamed) call.resolve(lease);
  }

  heartbeat(lease: TeammateLease, ttlMs: number): Promise<TeammateLease> {
    return this.#locked(async () => {
      const current = this.#read(lease.name);
      // Expired but not taken is still ours: nobody ran the teammate meanwhile.
      if (!current || current.token !== lease.token) throw new LeaseLostError(lease.name, current);
      const renewed = { ...current, leaseUntilUtc: new Date(this.#clock.now().getTime() + ttlMs).toISOString() };
      await this.#write(renewed);
      return renewed;
    });
  }

  release(lease: TeammateLease): Promise<void> {
    return this.#locked(() => {
      if (this.#read(lease.name)?.token === lease.token) unlinkQuietly(this.#file(lease.name));
    });
  }

  async live(): Promise<TeammateLease[]> {
    const now = this.#clock.now();
    const leases: TeammateLease[] = [];
    for (const file of namesIn(this.dir)) {
      if (!file.endsWith(".json")) continue;
      const lease = this.#read(file.slice(0, -".json".length));
      if (lease && isLive(lease, now)) leases.push(lease);
    }
    return leases;
  }

  async close(): Promise<void> {}

  #file(name: string): string {
    return join(this.dir, `${name}.json`);
  }

  #read(name: string): TeammateLease | undefined {
    return readStateFile(this.#file(name), TeammateLease);
  }

  // Its fsyncs wait off the event loop, under the lock: a spawn's or a heartbeat's
  // lease write no longer stalls the other agents.
  #write(lease: TeammateLease): Promise<void> {
    return writeFileAtomicOffLoop(this.#file(lease.name), `${JSON.stringify(TeammateLease.parse(lease))}\n`);
  }

  #locked<T>(work: () => T | Promise<T>): Promise<T> {
    ensureDir(this.dir);
    return withFileLock(this.#lock, work);
  }
}

interface PendingAcquire {
  name: AgentName;
  holder: LeaseHolder;
  ttlMs: number;
  resolve: (lease: TeammateLease | null) => void;
  reject: (error: unknown) => void;
}
