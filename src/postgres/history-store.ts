import type { SQL } from "bun";
import type { AgentName } from "../core/agent-name.ts";
import { AgentError } from "../core/errors.ts";
import {
  carriedUsageId,
  checkRecord,
  type HistoryBackend,
  type HistoryLog,
  type HistoryRecord,
  type OpenedHistory,
  MESSAGE_RECORD_PREFIX,
  SNAPSHOT_RECORD_PREFIX,
  USAGE_RECORD_PREFIX,
} from "../runtime/history-store.ts";
import type { UsageRecord } from "../usage/usage-record.ts";
import { sqlState } from "./mailbox-store.ts";
import { lockKey, parseRow, rowName, stateError } from "./state-rows.ts";

/**
 * Another process appended to the history since this one opened it: its owner
 * changed (a lease taken over). Refused, so two owners never interleave one
 * conversation; nothing of this append was stored.
 */
export class HistoryConflictError extends AgentError {
  readonly code = "HISTORY_CONFLICT";
  readonly category = "state" as const;
  constructor(readonly where: string) {
    super(
      `could not append to the history ${where}: another process appended to it since this one read it (its teammate lease or the session's runtime moved); ` +
        "nothing was written: let the process that owns it now carry on, or stop it and run again",
    );
  }
}

/**
 * Histories in PostgreSQL: one row per record in `agent_history`, in a
 * per-agent sequence. An append inserts all its records in one statement (one
 * transaction), so a crash leaves all of them or none — there is no half record
 * to repair. The sequence also fences: a row number taken already means another
 * writer got there first, and the append fails rather than interleave.
 */
export class PgHistoryBackend implements HistoryBackend {
  constructor(
    readonly sql: SQL,
    readonly session: string,
  ) {}

  async open(agent: AgentName): Promise<OpenedHistory> {
    const { records, last } = await this.#toApply(agent);
    return { records, log: new PgHistoryLog(this.sql, this.session, agent, last + 1, rowName("agent_history", this.session, agent)) };
  }

  async agents(): Promise<string[]> {
    try {
      const rows: { agent: string }[] = await this.sql`
        SELECT DISTINCT agent FROM agent_history WHERE session = ${this.session} AND agent NOT LIKE 'removed/%'`;
      // Sorted here as the file backend sorts its file names, whatever the database's collation.
      return rows.map((row) => row.agent).sort();
    } catch (error) {
      throw stateError("listing the histories", error, "nothing was changed");
    }
  }

  async read(agent: string): Promise<HistoryRecord[]> {
    return (await this.#rows(agent)).records;
  }

  async carriedUsage(known?: ReadonlySet<string>): Promise<UsageRecord[]> {
    let rows: { agent: string; seq: string | number; record: string }[];
    try {
      // The records are stored as the JSON text the file backend writes, so a usage record's row begins as its line does.
      rows = await this.sql`
        SELECT agent, seq, record FROM agent_history
        WHERE session = ${this.session} AND starts_with(record, ${USAGE_RECORD_PREFIX}) ORDER BY agent, seq`;
    } catch (error) {
      throw stateError("reading the usage the histories carry", error, "nothing was changed");
    }
    const records: UsageRecord[] = [];
    for (const row of rows) {
      const id = known === undefined ? undefined : carriedUsageId(row.record, 0);
      if (id !== undefined && known!.has(id)) continue;
      const where = `${rowName("agent_history", this.session, row.agent)}#${row.seq}`;
      const record = parseRow(row.record, CHECKED, where);
      if (record.type === "usage") records.push(record.record);
    }
    return records;
  }

  /** `agent`'s records, and the sequence number of the last (0 for none). */
  async #rows(agent: string): Promise<{ records: HistoryRecord[]; last: number }> {
    const where = rowName("agent_history", this.session, agent);
    let rows: { seq: string | number; record: string }[];
    try {
      rows = await this.sql`SELECT seq, record FROM agent_history WHERE session = ${this.session} AND agent = ${agent} ORDER BY seq`;
    } catch (error) {
      throw stateError(`reading the history ${where}`, error, "nothing was changed");
    }
    const records = rows.map((row) => parseRow(row.record, CHECKED, `${where}#${row.seq}`));
    return { records, last: rows.length === 0 ? 0 : Number(rows[rows.length - 1]!.seq) };
  }

  /**
   * The records of `agent` a HistoryStore applies (OpenedHistory.records), and
   * the sequence number of the last row of all: the other rows come back as
   * their number alone. The last snapshot is found by how the writer begins one;
   * should that row turn out not to be a snapshot, every row is read.
   */
  async #toApply(agent: string): Promise<{ records: HistoryRecord[]; last: number }> {
    const where = rowName("agent_history", this.session, agent);
    let rows: { seq: string | number; record: string | null; snapshot: boolean }[];
    try {
      rows = await this.sql`
        WITH mine AS (SELECT seq, record FROM agent_history WHERE session = ${this.session} AND agent = ${agent}),
             latest AS (SELECT coalesce(max(seq), 0) AS seq FROM mine WHERE starts_with(record, ${SNAPSHOT_RECORD_PREFIX}))
        SELECT mine.seq, mine.seq = latest.seq AS snapshot,
               CASE WHEN starts_with(record, ${USAGE_RECORD_PREFIX})
                      OR (mine.seq < latest.seq AND (starts_with(record, ${MESSAGE_RECORD_PREFIX}) OR starts_with(record, ${SNAPSHOT_RECORD_PREFIX})))
                    THEN NULL ELSE record END AS record
        FROM mine, latest ORDER BY mine.seq`;
    } catch (error) {
      throw stateError(`reading the history ${where}`, error, "nothing was changed");
    }
    const records: HistoryRecord[] = [];
    for (const row of rows) {
      if (row.record === null) continue;
      const record = parseRow(row.record, CHECKED, `${where}#${row.seq}`);
      if (row.snapshot && record.type !== "snapshot") return this.#rows(agent);
      records.push(record);
    }
    return { records, last: rows.length === 0 ? 0 : Number(rows[rows.length - 1]!.seq) };
  }

  async archive(agent: AgentName, at: Date): Promise<string | undefined> {
    // A stamp like the file backend's, so both name an archived history alike.
    const stamp = at.toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
    try {
      return await this.sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(this.session, `history:${agent}`)}, 0))`;
        const [found] = await tx`SELECT 1 AS one FROM agent_history WHERE session = ${this.session} AND agent = ${agent} LIMIT 1`;
        if (!found) return undefined;
        for (let n = 0; ; n += 1) {
          const name = `removed/${agent}-${stamp}${n === 0 ? "" : `.${n}`}`;
          const [taken] = await tx`SELECT 1 AS one FROM agent_history WHERE session = ${this.session} AND agent = ${name} LIMIT 1`;
          if (taken) continue;
          await tx`UPDATE agent_history SET agent = ${name} WHERE session = ${this.session} AND agent = ${agent}`;
          return rowName("agent_history", this.session, name);
        }
      });
    } catch (error) {
      throw stateError(`archiving the history of ${agent}`, error, "it was left where it was");
    }
  }

  async wasArchived(agent: AgentName): Promise<boolean> {
    // The upper-case T and Z never occur in an agent name, so "alice-2" cannot pass for "alice".
    const pattern = `^removed/${agent}-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{6}Z(\\.[0-9]+)?$`;
    try {
      const [row] = await this.sql`SELECT 1 AS one FROM agent_history WHERE session = ${this.session} AND agent ~ ${pattern} LIMIT 1`;
      return row !== undefined;
    } catch (error) {
      throw stateError(`looking for an archived history of ${agent}`, error, "nothing was changed");
    }
  }
}

/** The plain checks first, the schema for what they do not take (checkRecord), as a row parser takes it. */
const CHECKED = { safeParse: checkRecord };

class PgHistoryLog implements HistoryLog {
  #next: number;

  constructor(
    readonly sql: SQL,
    readonly session: string,
    readonly agent: string,
    next: number,
    readonly location: string,
  ) {
    this.#next = next;
  }

  async append(records: readonly HistoryRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((record, i) => ({ session: this.session, agent: this.agent, seq: this.#next + i, record: JSON.stringify(record) }));
    try {
      await this.sql`INSERT INTO agent_history ${this.sql(rows)}`;
    } catch (error) {
      if (sqlState(error) === "23505") throw new HistoryConflictError(this.location);
      throw stateError(`appending to the history ${this.location}`, error, "nothing of this append was stored");
    }
    this.#next += records.length;
  }

  close(): void {}
}
