import type { SQL } from "bun";
import { type RegistryFences, type TeamRegistry, TeammateRecord } from "../team/team-registry.ts";
import type { MailboxMessage } from "../core/message.ts";
import { TEAM_CHANNEL } from "./mail-channel.ts";
import type { PgMailboxStore } from "./mailbox-store.ts";
import { parseRow, rowName, stateError } from "./state-rows.ts";

/**
 * The team registry in PostgreSQL: one row per teammate in `agent_teammates`.
 * A put is one upsert and a remove one delete, so processes on other machines
 * (workers) change their own teammates without rewriting anyone else's; each
 * notifies TEAM_CHANNEL, which wakes the other processes' team watch.
 */
export class PgTeamRegistry implements TeamRegistry {
  constructor(
    readonly sql: SQL,
    readonly session: string,
    /** The session's mailbox on the same database: with it, a spawn's first task goes out with its record (changeWithTask). */
    readonly mailbox?: PgMailboxStore,
  ) {}

  async read(): Promise<TeammateRecord[]> {
    let rows: { name: string; record: string }[];
    try {
      rows = await this.sql`SELECT name, record FROM agent_teammates WHERE session = ${this.session} ORDER BY created_at_utc, added`;
    } catch (error) {
      throw stateError("reading the team", error, "nothing was changed");
    }
    return rows.map((row) => parseRow(row.record, TeammateRecord, rowName("agent_teammates", this.session, row.name)));
  }

  async put(record: TeammateRecord): Promise<void> {
    const valid = TeammateRecord.parse(record);
    try {
      // Notified in the same statement: delivered when the change commits, never before.
      await this.sql`
        WITH stored AS (
          INSERT INTO agent_teammates (session, name, created_at_utc, record)
          VALUES (${this.session}, ${valid.name}, ${valid.createdAtUtc}, ${JSON.stringify(valid)})
          ON CONFLICT (session, name) DO UPDATE SET created_at_utc = excluded.created_at_utc, record = excluded.record
          RETURNING 1
        )
        SELECT pg_notify(${TEAM_CHANNEL}, ${this.session}) FROM stored`;
    } catch (error) {
      throw stateError(`storing teammate ${valid.name}`, error, "the team is as it was");
    }
  }

  async change(put: TeammateRecord[], removed: string[], fences?: RegistryFences): Promise<string[]> {
    const valid = put.map((record) => TeammateRecord.parse(record));
    if (valid.length + removed.length === 0) return [];
    try {
      // One transaction, one notification: delivered when the changes commit.
      return await this.sql.begin((tx) => this.#changeIn(tx, valid, removed, fences));
    } catch (error) {
      throw stateError(`storing teammates ${[...valid.map((record) => record.name), ...removed].join(", ")}`, error, "the team is as it was");
    }
  }

  /**
   * Stores `put` and sends `task` in one transaction (with the session's mailbox
   * given): a spawn's first task is in ready exactly when its teammate's row no
   * longer names it pending, so no worker sees the one without the other.
   */
  get changeWithTask(): ((put: TeammateRecord[], task: MailboxMessage) => Promise<void>) | undefined {
    const mailbox = this.mailbox;
    if (!mailbox) return undefined;
    return async (put, task) => {
      const valid = put.map((record) => TeammateRecord.parse(record));
      await mailbox.sendAlong(task, async (tx) => {
        try {
          await this.#changeIn(tx, valid, [], undefined);
        } catch (error) {
          throw stateError(`storing teammates ${valid.map((record) => record.name).join(", ")}`, error, "the team is as it was, the task not sent");
        }
      });
    };
  }

  async #changeIn(tx: SQL, valid: TeammateRecord[], removed: string[], fences: RegistryFences | undefined): Promise<string[]> {
    const refused = await this.#refused(tx, fences);
    const gone = removed.filter((name) => !refused.includes(name));
    const kept = valid.filter((record) => !refused.includes(record.name));
    if (gone.length > 0) await tx`DELETE FROM agent_teammates WHERE session = ${this.session} AND name IN ${tx(gone)}`;
    for (const record of kept) {
      await tx`
        INSERT INTO agent_teammates (session, name, created_at_utc, record)
        VALUES (${this.session}, ${record.name}, ${record.createdAtUtc}, ${JSON.stringify(record)})
        ON CONFLICT (session, name) DO UPDATE SET created_at_utc = excluded.created_at_utc, record = excluded.record`;
    }
    if (gone.length + kept.length > 0) await tx`SELECT pg_notify(${TEAM_CHANNEL}, ${this.session})`;
    return refused;
  }

  /**
   * The fenced names whose lease's token is not the one given. Their lease rows
   * are locked (FOR SHARE) until the write commits: a take of the lease (FOR
   * UPDATE) waits for it, so the check holds for the whole write.
   */
  async #refused(tx: SQL, fences: RegistryFences | undefined): Promise<string[]> {
    if (!fences || fences.size === 0) return [];
    const names = [...fences.keys()];
    const rows: { name: string; token: string }[] = await tx`
      SELECT name, token FROM agent_teammate_leases WHERE session = ${this.session} AND name IN ${tx(names)} FOR SHARE`;
    const tokens = new Map(rows.map((row) => [row.name, row.token]));
    return names.filter((name) => tokens.get(name) !== fences.get(name));
  }

  async remove(name: string): Promise<void> {
    try {
      await this.sql`
        WITH gone AS (DELETE FROM agent_teammates WHERE session = ${this.session} AND name = ${name} RETURNING 1)
        SELECT pg_notify(${TEAM_CHANNEL}, ${this.session}) FROM gone`;
    } catch (error) {
      throw stateError(`removing teammate ${name}`, error, "the team is as it was");
    }
  }
}
