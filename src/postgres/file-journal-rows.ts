import type { SQL } from "bun";
import { type BlobSync, type FileJournalBackend, FileVersion, JournalEntry, type NumberedEntry } from "../file-journal/journal-records.ts";
import { parseRow, rowName, stateError } from "./state-rows.ts";

/**
 * A session's file versions, journal and kept contents in PostgreSQL (migration
 * 5), shared by every worker on the session: a version one worker's agent
 * recorded and a change another's made are both seen by the next check.
 */
export class PgFileJournal implements FileJournalBackend {
  constructor(
    readonly sql: SQL,
    readonly session: string,
  ) {}

  async versions(agent: string): Promise<Map<string, FileVersion>> {
    let rows: { path: string; record: string }[];
    try {
      rows = await this.sql`SELECT path, record FROM agent_file_versions WHERE session = ${this.session} AND agent = ${agent}`;
    } catch (error) {
      throw stateError(`reading ${agent}'s file versions`, error, "nothing was changed");
    }
    return new Map(rows.map((row) => [row.path, parseRow(row.record, FileVersion, rowName("agent_file_versions", this.session, `${agent}/${row.path}`))]));
  }

  async remember(agent: string, path: string, version: FileVersion): Promise<void> {
    try {
      await this.sql`
        INSERT INTO agent_file_versions (session, agent, path, record) VALUES (${this.session}, ${agent}, ${path}, ${JSON.stringify(version)})
        ON CONFLICT (session, agent, path) DO UPDATE SET record = excluded.record`;
    } catch (error) {
      throw stateError(`recording ${agent}'s version of ${path}`, error, "the file was written; the agent will be asked to read it again");
    }
  }

  async hasBlob(hash: string, size: number): Promise<boolean> {
    try {
      const [row] = await this.sql`SELECT octet_length(bytes) AS size FROM agent_file_blobs WHERE session = ${this.session} AND hash = ${hash}`;
      return row !== undefined && Number(row.size) === size;
    } catch (error) {
      throw stateError("looking up a journaled content", error, "nothing was changed");
    }
  }

  async putBlob(hash: string, bytes: Uint8Array, _sync: BlobSync): Promise<void> {
    // A row is durable once inserted, whatever `sync` asks.
    try {
      await this.sql`
        INSERT INTO agent_file_blobs (session, hash, bytes) VALUES (${this.session}, ${hash}, ${Buffer.from(bytes)})
        ON CONFLICT (session, hash) DO NOTHING`;
    } catch (error) {
      throw stateError("keeping a file's content in the journal", error, "the file was not changed");
    }
  }

  async blob(hash: string): Promise<Buffer | undefined> {
    try {
      const [row] = await this.sql`SELECT bytes FROM agent_file_blobs WHERE session = ${this.session} AND hash = ${hash}`;
      return row ? Buffer.from(row.bytes as Uint8Array) : undefined;
    } catch (error) {
      throw stateError("reading a journaled content", error, "nothing was changed");
    }
  }

  async append(entry: JournalEntry): Promise<number> {
    const record = JSON.stringify(JournalEntry.parse(entry));
    try {
      const [row] = await this.sql`
        INSERT INTO agent_file_journal (session, path, record) VALUES (${this.session}, ${entry.path}, ${record}) RETURNING seq`;
      return Number(row.seq);
    } catch (error) {
      throw stateError(`journaling a change of ${entry.path}`, error, "the file was not changed");
    }
  }

  async entries(): Promise<NumberedEntry[]> {
    let rows: { seq: string | number; record: string }[];
    try {
      rows = await this.sql`SELECT seq, record FROM agent_file_journal WHERE session = ${this.session} ORDER BY seq`;
    } catch (error) {
      throw stateError("reading the file journal", error, "nothing was changed");
    }
    return rows.map((row) => ({ ...parseRow(row.record, JournalEntry, rowName("agent_file_journal", this.session, String(row.seq))), seq: Number(row.seq) }));
  }

  async lastFor(path: string): Promise<NumberedEntry | undefined> {
    let rows: { seq: string | number; record: string }[];
    try {
      rows = await this.sql`
        SELECT seq, record FROM agent_file_journal WHERE session = ${this.session} AND path = ${path} ORDER BY seq DESC LIMIT 1`;
    } catch (error) {
      throw stateError(`reading the file journal of ${path}`, error, "nothing was changed");
    }
    const row = rows[0];
    return row ? { ...parseRow(row.record, JournalEntry, rowName("agent_file_journal", this.session, String(row.seq))), seq: Number(row.seq) } : undefined;
  }
}
