import type { SQL } from "bun";
import type { AgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { TEAM_CHANNEL } from "./mail-channel.ts";
import { LeaseHolder, LeaseLostError, type LeaseRenewal, type TeammateLease, type TeammateLeases, freshLease, isLive, leaseStoreError, renewalOfOne } from "../leases/teammate-leases.ts";

interface Row {
  name: string;
  holder: string;
  token: string;
  acquired_at_utc: string;
  lease_until: Date;
}

/**
 * Teammate leases as rows of `agent_teammate_leases`, for workers on any machine
 * that reaches the database. Taking one locks its row (created first if needed,
 * so two takers of a new name queue on the same row) and checks the holder
 * before replacing it; a heartbeat or release names the token it holds, so one
 * from a replaced holder changes nothing. A holder's heartbeat round is one
 * UPDATE of all its rows. Times come from `clock` (the
 * machines' clocks must agree to well within a lease's length).
 */
export class PgTeammateLeases implements TeammateLeases {
  readonly #sql: SQL;
  readonly #session: string;
  readonly #clock: Clock;

  constructor(options: { sql: SQL; session: string; clock?: Clock }) {
    this.#sql = options.sql;
    this.#session = options.session;
    this.#clock = options.clock ?? systemClock;
  }

  async acquire(name: AgentName, holder: LeaseHolder, ttlMs: number): Promise<TeammateLease | null> {
    const now = this.#clock.now();
    const lease = freshLease(name, holder, now, ttlMs);
    try {
      return await this.#sql.begin(async (tx) => {
        await tx`
          INSERT INTO agent_teammate_leases (session, name, holder, token, acquired_at_utc, lease_until)
          VALUES (${this.#session}, ${name}, ${JSON.stringify(holder)}, ${lease.token}, ${lease.acquiredAtUtc}, ${new Date(0)})
          ON CONFLICT (session, name) DO NOTHING`;
        const [row]: Row[] = await tx`
          SELECT name, holder, token, acquired_at_utc, lease_until FROM agent_teammate_leases
          WHERE session = ${this.#session} AND name = ${name} FOR UPDATE`;
        const current = row && leaseOf(row);
        if (current && current.holder.id !== holder.id && isLive(current, now)) return null;
        await tx`
          UPDATE agent_teammate_leases
          SET holder = ${JSON.stringify(holder)}, token = ${lease.token}, acquired_at_utc = ${lease.acquiredAtUtc},
              lease_until = ${new Date(lease.leaseUntilUtc)}
          WHERE session = ${this.#session} AND name = ${name}`;
        return lease;
      });
    } catch (error) {
      throw leaseStoreError(`take the lease on teammate ${name}`, error, "the lease was not taken");
    }
  }

  async heartbeat(lease: TeammateLease, ttlMs: number): Promise<TeammateLease> {
    return renewalOfOne(await this.heartbeatAll([lease], ttlMs));
  }

  /** One statement (one round-trip, one commit) renews every lease still its token's; the rest are lost. */
  async heartbeatAll(leases: readonly TeammateLease[], ttlMs: number): Promise<LeaseRenewal> {
    if (leases.length === 0) return { renewed: [], lost: [] };
    const until = new Date(this.#clock.now().getTime() + ttlMs);
    const names = leases.map((lease) => lease.name);
    let rows: Row[];
    try {
      rows = await this.#sql`
        UPDATE agent_teammate_leases AS l SET lease_until = ${until}
        FROM unnest(${this.#sql.array(names, "TEXT")}, ${this.#sql.array(leases.map((lease) => lease.token), "TEXT")}) AS held(name, token)
        WHERE l.session = ${this.#session} AND l.name = held.name AND l.token = held.token
        RETURNING l.name, l.holder, l.token, l.acquired_at_utc, l.lease_until`;
    } catch (error) {
      throw leaseStoreError(`renew the leases on teammates ${names.join(", ")}`, error, "they were not renewed");
    }
    const kept = new Map(rows.map((row) => [row.token, leaseOf(row)]));
    const renewal: LeaseRenewal = { renewed: [], lost: [] };
    for (const lease of leases) {
      const renewed = kept.get(lease.token);
      if (renewed) renewal.renewed.push(renewed);
      // Who holds it now, for the message: read only when one is lost.
      else renewal.lost.push({ lease, error: new LeaseLostError(lease.name, await this.#current(lease.name)) });
    }
    return renewal;
  }

  async release(lease: TeammateLease): Promise<void> {
    try {
      // A teammate given up may be taken at once: the notification wakes the other processes' team watch.
      await this.#sql`
        WITH gone AS (DELETE FROM agent_teammate_leases WHERE session = ${this.#session} AND name = ${lease.name} AND token = ${lease.token} RETURNING 1)
        SELECT pg_notify(${TEAM_CHANNEL}, ${this.#session}) FROM gone`;
    } catch (error) {
      throw leaseStoreError(`give up the lease on teammate ${lease.name}`, error, "it runs out by itself");
    }
  }

  async live(): Promise<TeammateLease[]> {
    const now = this.#clock.now();
    let rows: Row[];
    try {
      rows = await this.#sql`
        SELECT name, holder, token, acquired_at_utc, lease_until FROM agent_teammate_leases
        WHERE session = ${this.#session} AND lease_until > ${now} ORDER BY name`;
    } catch (error) {
      throw leaseStoreError("list the teammate leases", error, "nothing was changed");
    }
    return rows.map(leaseOf).filter((lease) => isLive(lease, now));
  }

  async close(): Promise<void> {}

  async #current(name: string): Promise<TeammateLease | undefined> {
    const [row]: Row[] = await this.#sql`
      SELECT name, holder, token, acquired_at_utc, lease_until FROM agent_teammate_leases
      WHERE session = ${this.#session} AND name = ${name}`.catch(() => []);
    return row && leaseOf(row);
  }
}

function leaseOf(row: Row): TeammateLease {
  return {
    name: row.name,
    holder: LeaseHolder.parse(JSON.parse(row.holder)),
    token: row.token,
    acquiredAtUtc: row.acquired_at_utc,
    leaseUntilUtc: new Date(row.lease_until).toISOString(),
  };
}
