import { renameSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { AgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { ensureDir, fsyncDirOffLoop, namesIn, tempPathFor, unlinkQuietly, writeNewFileDurably } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { readStateFile } from "../storage/state-file.ts";
import { HolderHeartbeats } from "./holder-heartbeats.ts";
import { type LeaseHolder, LeaseLostError, type LeaseRenewal, TeammateLease, type TeammateLeases, freshLease, isLive, renewalOfOne } from "./teammate-leases.ts";
import { lazySchema } from "../core/lazy-schema.ts";
import { groupStart } from "../storage/group-start.ts";

/**
 * A lease file as this build writes it: `renewal: "holder"` says its heartbeats
 * are in its holder's file (holder-heartbeats.ts), not in this one. A file
 * without it was written by the previous build, whose heartbeats rewrote the
 * lease file itself: it is read the same way (live until the later of its own
 * end and its holder's heartbeat, which such a holder never writes). The marker
 * also makes a previous build refuse these files (its schema is strict) rather
 * than take a lease over while this build's holder still renews it.
 */
const LeaseFile = lazySchema(() =>
  z
    .union([TeammateLease.unwrap().extend({ renewal: z.literal("holder") }), TeammateLease])
    .transform(({ name, holder, token, acquiredAtUtc, leaseUntilUtc }): TeammateLease => ({ name, holder, token, acquiredAtUtc, leaseUntilUtc })),
);

/**
 * The token of `name`'s lease as its file in `<sessionDir>/leases/` says now
 * (live or run out: the token of the last holder to take it), or undefined when
 * no one holds it. What the team registry fences a teammate's record with.
 */
export function leaseTokenIn(sessionDir: string, name: string): string | undefined {
  return readStateFile(join(sessionDir, "leases", `${name}.json`), LeaseFile)?.token;
}

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
 *
 * A lease file is written when the lease is taken and removed when it is given
 * up; heartbeats renew a holder's leases all at once in `leases/holders/`, one
 * write per round whatever their number. A lease is live until the later of
 * its own end (taking it counts as its first heartbeat) and the end its
 * holder's last heartbeat of it gave; a holder that stops beating loses every
 * lease it holds.
 */
export class FileTeammateLeases implements TeammateLeases {
  readonly dir: string;
  readonly #lock: string;
  readonly #clock: Clock;
  readonly #holders: HolderHeartbeats;
  readonly #acquires: PendingAcquire[] = [];
  readonly #releases: PendingRelease[] = [];

  constructor(sessionDir: string, options: { clock?: Clock } = {}) {
    this.dir = join(sessionDir, "leases");
    this.#lock = join(this.dir, ".lock");
    this.#clock = options.clock ?? systemClock;
    this.#holders = new HolderHeartbeats(this.dir);
  }

  acquire(name: AgentName, holder: LeaseHolder, ttlMs: number): Promise<TeammateLease | null> {
    return new Promise((resolve, reject) => {
      // The first call waiting starts a take of the lock; the calls made before
      // it is granted ride on it.
      if (this.#acquires.push({ name, holder, ttlMs, resolve, reject }) === 1) void groupStart().then(() => this.#takeWaiting());
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
    const beats = this.#heartbeatsRead();
    for (const call of batch) {
      const current = granted.get(call.name) ?? this.#readLive(call.name, beats);
      if (current && current.holder.id !== call.holder.id && isLive(current, now)) {
        call.resolve(null);
        continue;
      }
      const lease = freshLease(call.name, call.holder, now, call.ttlMs);
      granted.set(call.name, lease);
      writes.push({ call, lease, temp: tempPathFor(this.#file(call.name)) });
    }
    if (writes.length === 0) return;
    const synced = await Promise.allSettled(writes.map(({ lease, temp }) => writeNewFileDurably(temp, leaseFileText(lease))));
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

  async heartbeat(lease: TeammateLease, ttlMs: number): Promise<TeammateLease> {
    return renewalOfOne(await this.heartbeatAll([lease], ttlMs));
  }

  heartbeatAll(leases: readonly TeammateLease[], ttlMs: number): Promise<LeaseRenewal> {
    if (leases.length === 0) return Promise.resolve({ renewed: [], lost: [] });
    // Under the lock: a takeover is decided either before this round (which
    // then finds the token changed) or after it (which then finds it live).
    return this.#locked(async () => {
      const now = this.#clock.now().getTime();
      const renewal: LeaseRenewal = { renewed: [], lost: [] };
      const byHolder = new Map<string, { holder: LeaseHolder; renewed: TeammateLease[] }>();
      for (const lease of leases) {
        const current = this.#read(lease.name);
        // Expired but not taken is still ours: nobody ran the teammate meanwhile.
        if (!current || current.token !== lease.token) {
          renewal.lost.push({ lease, error: new LeaseLostError(lease.name, current) });
          continue;
        }
        const renewed = { ...current, leaseUntilUtc: new Date(Math.max(now + ttlMs, Date.parse(current.leaseUntilUtc))).toISOString() };
        renewal.renewed.push(renewed);
        const of = byHolder.get(current.holder.id) ?? { holder: current.holder, renewed: [] };
        of.renewed.push(renewed);
        byHolder.set(current.holder.id, of);
      }
      // One write per holder: a runtime's round is one, however many teammates it runs.
      const dropped = new Set(renewal.lost.map(({ lease }) => lease.token));
      await Promise.all([...byHolder.values()].map(({ holder, renewed }) => this.#holders.beat(holder, renewed, dropped, now)));
      return renewal;
    });
  }

  release(lease: TeammateLease): Promise<void> {
    return new Promise((resolve, reject) => {
      // As acquires are: the releases asked for before the lock is granted ride on
      // one take of it (a runtime closing gives all its teammates up at once), and
      // the holders' files are swept once for them all, not once each — every
      // sweep reads every lease file.
      if (this.#releases.push({ lease, resolve, reject }) === 1) void groupStart().then(() => this.#releaseWaiting());
    });
  }

  #releaseWaiting(): void {
    let batch: PendingRelease[] = [];
    this.#locked(() => {
      batch = this.#releases.splice(0);
      const released: PendingRelease[] = [];
      for (const call of batch) {
        try {
          if (this.#read(call.lease.name)?.token === call.lease.token) unlinkQuietly(this.#file(call.lease.name));
          released.push(call);
        } catch (error) {
          call.reject(error);
        }
      }
      try {
        this.#holders.sweep(new Set(this.#all().map((held) => held.holder.id)));
      } catch {
        // Housekeeping only (the leases are given up): a damaged lease file is reported by what reads it for a lease.
      }
      for (const call of released) call.resolve();
    }).catch((error: unknown) => {
      // The lock itself failed: no call of the batch was answered yet.
      if (batch.length === 0) batch = this.#releases.splice(0);
      for (const call of batch) call.reject(error);
    });
  }

  async live(): Promise<TeammateLease[]> {
    const now = this.#clock.now();
    const beats = this.#heartbeatsRead();
    return this.#all()
      .map((lease) => withHeartbeat(lease, beats))
      .filter((lease) => isLive(lease, now));
  }

  async close(): Promise<void> {}

  #file(name: string): string {
    return join(this.dir, `${name}.json`);
  }

  #read(name: string): TeammateLease | undefined {
    return readStateFile(this.#file(name), LeaseFile);
  }

  /** `name`'s lease with the end its holder's heartbeats give it. */
  #readLive(name: string, beats: Heartbeats): TeammateLease | undefined {
    const lease = this.#read(name);
    return lease && withHeartbeat(lease, beats);
  }

  /** Every lease on file, as written (their own ends). */
  #all(): TeammateLease[] {
    const leases: TeammateLease[] = [];
    for (const file of namesIn(this.dir)) {
      if (!file.endsWith(".json")) continue;
      const lease = this.#read(file.slice(0, -".json".length));
      if (lease) leases.push(lease);
    }
    return leases;
  }

  /** The holders' heartbeats, each file read once however many leases its holder has. */
  #heartbeatsRead(): Heartbeats {
    const read = new Map<string, Map<string, number>>();
    return (holderId) => {
      let ends = read.get(holderId);
      if (!ends) read.set(holderId, (ends = this.#holders.endsOf(holderId)));
      return ends;
    };
  }

  #locked<T>(work: () => T | Promise<T>): Promise<T> {
    ensureDir(this.dir);
    return withFileLock(this.#lock, work);
  }
}

/** A holder's heartbeat ends by lease token, each holder's file read at most once. */
type Heartbeats = (holderId: string) => Map<string, number>;

/** `lease` live until the later of its own end and the end its holder's last heartbeat of it gave it. */
function withHeartbeat(lease: TeammateLease, beats: Heartbeats): TeammateLease {
  const beat = beats(lease.holder.id).get(lease.token);
  return beat !== undefined && beat > Date.parse(lease.leaseUntilUtc) ? { ...lease, leaseUntilUtc: new Date(beat).toISOString() } : lease;
}

function leaseFileText(lease: TeammateLease): string {
  return `${JSON.stringify({ ...TeammateLease.parse(lease), renewal: "holder" })}\n`;
}

interface PendingRelease {
  lease: TeammateLease;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface PendingAcquire {
  name: AgentName;
  holder: LeaseHolder;
  ttlMs: number;
  resolve: (lease: TeammateLease | null) => void;
  reject: (error: unknown) => void;
}
