import type { Migration } from "./index.ts";

/**
 * `agent_attachments`: what did not fit in a message (docs/mailbox.md,
 * "Attachments"), one row per content of a session, as the file backend's
 * `attachments/<id>`. Removed with the session's other rows.
 */
export const attachmentsMigration: Migration = {
  version: 6,
  name: "attachments",
  sql: `
    CREATE TABLE agent_attachments (
      session text NOT NULL,
      id      text NOT NULL,
      bytes   bytea NOT NULL,
      PRIMARY KEY (session, id)
    );
  `,
};
