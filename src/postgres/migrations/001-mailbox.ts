import type { Migration } from "./index.ts";

/**
 * The mailbox: one row per message, keyed by (session, id) as a session's files
 * are by id; its state a column. `body` is the message exactly as the file store
 * writes it (JSON), so content comes back byte-for-byte — and JSON escapes the
 * NUL character PostgreSQL text cannot hold. The queue index covers both states a
 * claim looks at, in FIFO order: ready ones, and processing ones whose lease may
 * have expired. FIFO compares the text byte by byte (collation "C"), as the file
 * store compares the strings, whatever the database's locale.
 */
export const mailboxMigration: Migration = {
  version: 1,
  name: "mailbox",
  sql: `
    CREATE TABLE agent_messages (
      session        text NOT NULL,
      id             text COLLATE "C" NOT NULL,
      agent          text NOT NULL,
      state          text NOT NULL CHECK (state IN ('ready', 'processing', 'done', 'quarantine')),
      created_at_utc text COLLATE "C" NOT NULL,
      sender         text NOT NULL,
      kind           text NOT NULL,
      body           text NOT NULL,
      lease_owner    text,
      lease_token    text,
      lease_until    timestamptz,
      reason         text,
      updated_at     timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (session, id)
    );
    CREATE INDEX agent_messages_queue ON agent_messages (session, agent, created_at_utc, id)
      WHERE state IN ('ready', 'processing');
  `,
};
