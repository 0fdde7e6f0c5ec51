import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { ensureDir, namesIn, unlinkQuietly, writeFileAtomicOffLoop } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { readStateFile } from "../storage/state-file.ts";
import { type LeaseHolder, LeaseLostError, TeammateLease, type TeammateLeases, freshLease, isLive } from "./teammate-leases.ts";

/**
 * Teammate leases as files, `<session>/leases/<name>.json`, for runtimes and
 * workers of one machine (or of machines sharing the state dir): every change is
 * a read-check-write under `leases/.lock`, so two takers of a free lease never
 * both win, and a write is an atomic rename, so a reader never sees half a lease.
 */
export class FileTeammateLeases implements TeammateLeases {
  readonly dir: string;
  readonly #lock: string;
  readonly #clock: Clock;

  constructor(sessionDir: string, options: { clock?: Clock } = {}) {
    this.dir = join(sessionDir, "leases");
    this.#lock = join(this.dir, ".lock");
    this.#clock = options.clock ?? systemClock;
  }

  acquire(name: AgentName, holder: LeaseHolder, ttlMs: number): Promise<TeammateLease | null> {
    return this.#locked(async () => {
      const now = this.#clock.now();
      const current = this.#read(name);
      if (current && current.holder.id !== holder.id && isLive(current, now)) return null;
      const lease = freshLease(name, holder, now, ttlMs);
      await this.#write(lease);
      return lease;
    });
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
