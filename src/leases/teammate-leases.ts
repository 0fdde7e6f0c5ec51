import { hostname } from "node:os";
import { z } from "zod";
import { AgentName } from "../core/agent-name-schema.ts";
import { AgentError } from "../core/errors.ts";
import { UtcInstant } from "../core/message.ts";
import { isProcessAlive, processStartTicks } from "../storage/process-liveness.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * Who runs a teammate: at most one live process of a session (the Lead's runtime
 * or an `agent worker`) holds a teammate's lease, renews it by heartbeats, and
 * only the holder claims that teammate's messages and writes its history. A
 * holder that stops renewing (killed, hung, cut off) loses the lease when it
 * expires; a holder dead on this very host loses it at once.
 */
export const LeaseHolder = lazySchema(() =>
  z.strictObject({
    /** Unique per process (and per runtime in it): `<host>:<pid>:<random>`. */
    id: z.string().min(1),
    pid: z.number().int().positive(),
    host: z.string().min(1),
    /** The process's start time in clock ticks (Linux): tells a reused pid from the holder. */
    pidStart: z.string().regex(/^\d+$/).optional(),
    /** What it is: "lead" (an agent run/drain) or "worker". */
    kind: z.enum(["lead", "worker"]),
  }),
);
export type LeaseHolder = z.infer<typeof LeaseHolder>;

export const TeammateLease = lazySchema(() =>
  z.strictObject({
    name: AgentName,
    holder: LeaseHolder,
    /** Fresh on every acquisition: a heartbeat or release with an older token is refused (fencing). */
    token: z.uuid(),
    acquiredAtUtc: UtcInstant,
    leaseUntilUtc: UtcInstant,
  }),
);
export type TeammateLease = z.infer<typeof TeammateLease>;

/** The teammate leases of one session, on whichever backend the session's store is. */
export interface TeammateLeases {
  /**
   * Takes `name`'s lease for `holder` for `ttlMs` unless another holder's lease
   * is live; returns it, or null when someone else holds it. A holder that
   * already holds it gets a new token (its old one is fenced off).
   */
  acquire(name: AgentName, holder: LeaseHolder, ttlMs: number): Promise<TeammateLease | null>;
  /** Extends a held lease by `ttlMs` from now. Throws LeaseLostError when it is no longer this token's. */
  heartbeat(lease: TeammateLease, ttlMs: number): Promise<TeammateLease>;
  /**
   * A holder's heartbeat round: extends every lease of `leases` that is still
   * its token's by `ttlMs` from now, in one durable write whatever their number
   * (one file on files, one statement on PostgreSQL), and reports the others as
   * lost. Throws LeaseStoreError when the store could not be written: then
   * nothing is known lost, the caller keeps its leases and tries again.
   */
  heartbeatAll(leases: readonly TeammateLease[], ttlMs: number): Promise<LeaseRenewal>;
  /** Gives the lease up; nothing happens when it is no longer this token's. */
  release(lease: TeammateLease): Promise<void>;
  /** Every lease that is live now (not expired, holder not known dead). */
  live(): Promise<TeammateLease[]>;
  close(): Promise<void>;
}

/** What one heartbeat round did to the leases it was given. */
export interface LeaseRenewal {
  /** Still the holder's, each with its new end. */
  renewed: TeammateLease[];
  /** Taken by another holder or given up: the holder must stop running their teammates. */
  lost: { lease: TeammateLease; error: LeaseLostError }[];
}

/** One lease's heartbeat as a round of one: its renewal, or its LeaseLostError thrown. */
export function renewalOfOne(renewal: LeaseRenewal): TeammateLease {
  const [lost] = renewal.lost;
  if (lost) throw lost.error;
  return renewal.renewed[0]!;
}

/** A heartbeat found the lease expired and taken, or gone: the holder must stop running that teammate. */
export class LeaseLostError extends AgentError {
  readonly code = "LEASE_LOST";
  readonly category = "state" as const;
  constructor(
    readonly teammate: string,
    now: TeammateLease | undefined,
  ) {
    super(
      `lost the lease on teammate ${teammate}${now ? ` to ${now.holder.kind} pid ${now.holder.pid} on ${now.holder.host}` : ""}: ` +
        "it was not renewed in time (a stalled process or an overloaded store); that process runs the teammate now, this one stops it",
    );
  }
}

/** The lease store could not be read or written (the database unreachable, a disk error). */
export class LeaseStoreError extends AgentError {
  readonly code = "LEASE_STORE";
  readonly category = "state" as const;
}

/** One line: what failed, why, and what state that leaves. */
export function leaseStoreError(what: string, cause: unknown, outcome: string): LeaseStoreError {
  const detail = (cause instanceof Error ? cause.message : String(cause)).replace(/\s*\n\s*/g, " ");
  return new LeaseStoreError(`could not ${what}: ${detail}; ${outcome}; check that the store is reachable`, { cause });
}

/** This process as a lease holder. */
export function thisHolder(kind: LeaseHolder["kind"]): LeaseHolder {
  const start = processStartTicks();
  return {
    id: `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`,
    pid: process.pid,
    host: hostname(),
    ...(start !== undefined ? { pidStart: start } : {}),
    kind,
  };
}

/**
 * Whether a lease is live at `now`: not past its end, and not held by a process
 * of this host that is gone (killed with -9: nothing would release it, and the
 * next runtime on this machine need not wait for it to run out).
 */
export function isLive(lease: TeammateLease, now: Date): boolean {
  if (Date.parse(lease.leaseUntilUtc) <= now.getTime()) return false;
  if (lease.holder.host === hostname() && !isProcessAlive(lease.holder.pid, lease.holder.pidStart)) return false;
  return true;
}

/** A new lease of `name` for `holder` from `now`, with a token never used before. */
export function freshLease(name: AgentName, holder: LeaseHolder, now: Date, ttlMs: number): TeammateLease {
  return {
    name,
    holder,
    token: crypto.randomUUID(),
    acquiredAtUtc: now.toISOString(),
    leaseUntilUtc: new Date(now.getTime() + ttlMs).toISOString(),
  };
}

/** How often a holder renews a lease of `ttlMs`: three chances before it runs out. */
export function heartbeatEveryMs(ttlMs: number): number {
  return Math.max(50, Math.floor(ttlMs / 3));
}

export const DEFAULT_LEASE_TTL_MS = 15_000;
