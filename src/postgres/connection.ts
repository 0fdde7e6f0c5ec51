import type { SQL } from "bun";
import { StoreConnectionError } from "../core/errors.ts";
import { displayStoreUrl } from "../store/store-url.ts";
import { migrate } from "./migrations.ts";

/** Seconds to wait for the server before a command gives up with one line. */
const CONNECT_TIMEOUT_S = 10;

export interface PostgresOptions {
  /** Connections in the pool (default 4: a runtime's claims, acks and sends are short). */
  max?: number;
  /** Apply pending migrations before the first use (default true). */
  migrate?: boolean;
}

/**
 * One PostgreSQL database the store's backends share: a pool of connections
 * (Bun's built-in client) whose schema is checked — and migrated — before it is
 * handed out. Closed by whoever opened it.
 */
export class PostgresConnection {
  private constructor(
    readonly sql: SQL,
    /** The URL as it may be printed (password masked). */
    readonly display: string,
    /** The schema versions this open applied (empty when it was current). */
    readonly applied: number[],
  ) {}

  /**
   * Connects and brings the schema up to date. A server that cannot be reached,
   * refuses the login or has no such database is one StoreConnectionError line
   * (exit 5) naming the URL without its password and what to check.
   */
  static async open(url: string, options: PostgresOptions = {}): Promise<PostgresConnection> {
    const display = displayStoreUrl(url);
    // Bun.SQL read here, not destructured from "bun" at the top: a bundle hoists that
    // to its start, and reading the getter loads bun:sql — several milliseconds of
    // every command's start-up, `--version` included (bench/startup.ts).
    const sql = new Bun.SQL(url, { max: options.max ?? 4, connectionTimeout: CONNECT_TIMEOUT_S, idleTimeout: 0 });
    try {
      await sql`SELECT 1`;
    } catch (error) {
      await sql.close().catch(() => {});
      throw connectionError(display, error);
    }
    try {
      const applied = options.migrate === false ? [] : await migrate(sql);
      return new PostgresConnection(sql, display, applied);
    } catch (error) {
      await sql.close().catch(() => {});
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.sql.close();
  }
}

/** What went wrong, in words that say what to check; the password never appears. */
export function connectionError(display: string, error: unknown): StoreConnectionError {
  const code = (error as { code?: string; errno?: string }).code ?? "";
  const errno = (error as { errno?: string }).errno ?? "";
  const detail = scrub(error instanceof Error ? error.message : String(error));
  let fix = "check that the server runs and the URL (--store, AGENT_STORE or config store) is right";
  if (/REFUSED|ECONNREFUSED|TIMEOUT|ENOTFOUND|UNREACH/i.test(`${code} ${detail}`)) fix = "is the server running and reachable at that host and port?";
  else if (errno === "28P01" || errno === "28000" || /password|authentication/i.test(detail)) fix = "check the user and password in the URL";
  else if (errno === "3D000") fix = "create the database (createdb) or name an existing one in the URL";
  return new StoreConnectionError(`cannot use the PostgreSQL store ${display}: ${detail}; ${fix}`, { cause: error });
}

/** A driver message may quote the URL it was given: keep its password out. */
function scrub(text: string): string {
  return text.replace(/(:\/\/[^\s:/?#@]*:)[^\s/?#@]+@/g, "$1[REDACTED]@").replace(/\s*\n\s*/g, " ").trim();
}
