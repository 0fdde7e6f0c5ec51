import type { Migration } from "./index.ts";

/**
 * A session's memory of the user's files (docs/files.md), as the file backend's
 * `files/` dir holds it:
 *
 * - `agent_file_versions`: what each agent last read or wrote of each path.
 * - `agent_file_journal`: every change an agent made, in order (`seq`).
 * - `agent_file_blobs`: the contents the journal names, once per hash.
 */
export const fileJournalMigration: Migration = {
  version: 5,
  name: "file versions and journal",
  sql: `
    CREATE TABLE agent_file_versions (
      session text NOT NULL,
      agent   text NOT NULL,
      path    text NOT NULL,
      record  text NOT NULL,
      PRIMARY KEY (session, agent, path)
    );
    CREATE TABLE agent_file_journal (
      session text NOT NULL,
      seq     bigint GENERATED ALWAYS AS IDENTITY,
      path    text NOT NULL,
      record  text NOT NULL,
      PRIMARY KEY (session, seq)
    );
    CREATE INDEX agent_file_journal_path ON agent_file_journal (session, path, seq);
    CREATE TABLE agent_file_blobs (
      session text NOT NULL,
      hash    text NOT NULL,
      bytes   bytea NOT NULL,
      PRIMARY KEY (session, hash)
    );
  `,
};
