import type { Migration } from "./index.ts";

/**
 * Claims as HOT updates. Migration 1's queue index named `state` in its predicate,
 * so a claim (ready -> processing) changed an indexed column: PostgreSQL wrote a new
 * row version with fresh entries in both indexes, and a claim+ack cost about 4.5
 * times the WAL of a bare insert/delete pair (docs/store.md). `open` is true for
 * ready and processing alike and only changes when a message is finished, so a
 * claim, a lease renewal and a release touch no indexed column and can stay on
 * their page (fillfactor leaves room for that) without new index entries.
 */
export const hotClaimsMigration: Migration = {
  version: 4,
  name: "hot-claims",
  sql: `
    ALTER TABLE agent_messages
      ADD COLUMN open boolean GENERATED ALWAYS AS (state IN ('ready', 'processing')) STORED;
    DROP INDEX agent_messages_queue;
    CREATE INDEX agent_messages_open_queue ON agent_messages (session, agent, created_at_utc, id) WHERE open;
    ALTER TABLE agent_messages SET (fillfactor = 50);
  `,
};
