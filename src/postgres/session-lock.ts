import { hostname } from "node:os";
import type { SQL } from "bun";
import { AgentError, StateDirBusyError } from "../core/errors.ts";
import { migrate } from "./migrations.ts";
import { connectionError } from "./connection.ts";
import { displayStoreUrl } from "../store/store-url.ts";
import { lockKey } from "./state-rows.ts";

/** How often a runtime waiting for the session (--wait-lock) asks again. */
const RETRY_MS = 200;

/**
 * The session's runtime lock in PostgreSQL: a session-level advisory lock held
 * on a connection of its own for as long as the runtime runs. It is the one
 * lock every machine sees (the state dir's lock only guards one machine), and
 * the server drops it when that connection ends — a runtime killed with -9
 * frees its session without anyone breaking a lock. Who holds it is recorded
 * in `agent_session_owners`, for the busy message only.
 */
export class PgSessionLock {
  private constructor(
    readonly session: string,
    readonly sql: SQL,
  ) {}

  /**
   * Takes the lock, waiting up to `waitMs`; a session held elsewhere is
   * StateDirBusyError (exit 4) naming the holder, with `fix` as the way out.
   */
  static async acquire(url: string, session: string, options: { waitMs?: number; fix: string; where: string }): Promise<PgSessionLock> {
    // One connection, never shared: the advisory lock belongs to it.
    // Bun.SQL read here, not imported: see PostgresConnection.open.
    const sql = new Bun.SQL(url, { max: 1, idleTimeout: 0 });
    const key = lockKey(session, "runtime");
    const deadline = Date.now() + (options.waitMs ?? 0);
    try {
      // Its table may be new: a session's first runtime on a fresh database migrates it.
      await migrate(sql);
      for (;;) {
        const [row]: { taken: boolean }[] = await sql`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS taken`;
        if (row?.taken) break;
        if (Date.now() >= deadline) {
          const [owner]: { pid: number; host: string }[] = await sql`SELECT pid, host FROM agent_session_owners WHERE session = ${session}`;
          throw new StateDirBusyError(options.where, owner ? { pid: Number(owner.pid), host: owner.host } : undefined, options.fix);
        }
        await Bun.sleep(RETRY_MS);
      }
      await sql`
        INSERT INTO agent_session_owners (session, pid, host) VALUES (${session}, ${process.pid}, ${hostname()})
        ON CONFLICT (session) DO UPDATE SET pid = excluded.pid, host = excluded.host, since = now()`;
    } catch (error) {
      await sql.close().catch(() => {});
      if (error instanceof AgentError) throw error;
      throw connectionError(displayStoreUrl(url), error);
    }
    return new PgSessionLock(session, sql);
  }

  /**
   * Who holds the session's lock now, read without taking it (a reader must not
   * make a starting Lead find its session busy): the server's lock table says
   * whether it is held, `agent_session_owners` by whom. Undefined when free.
   */
  static async holder(sql: SQL, session: string): Promise<{ pid: number; host: string } | undefined> {
    const key = lockKey(session, "runtime");
    // A bigint advisory lock shows as its high and low halves (classid, objid) with objsubid 1.
    const [held] = await sql`
      SELECT 1 AS one FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 1
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(${key}, 0)`;
    if (!held) return undefined;
    const [owner]: { pid: number; host: string }[] = await sql`SELECT pid, host FROM agent_session_owners WHERE session = ${session}`;
    return owner ? { pid: Number(owner.pid), host: owner.host } : { pid: 0, host: "unknown" };
  }

  /** Lets the session go; closing the connection would too, this says so at once. */
  async release(): Promise<void> {
    try {
      await this.sql`DELETE FROM agent_session_owners WHERE session = ${this.session} AND pid = ${process.pid} AND host = ${hostname()}`;
      await this.sql`SELECT pg_advisory_unlock(hashtextextended(${lockKey(this.session, "runtime")}, 0))`;
    } finally {
      await this.sql.close().catch(() => {});
    }
  }
}
