import type { Migration } from "./index.ts";

/**
 * Teammate leases (docs/worker.md): one row per teammate of a session that some
 * process holds or held. `token` changes on every acquisition, so a heartbeat or
 * release from a holder that was replaced matches no row.
 */
export const teammateLeasesMigration: Migration = {
  version: 3,
  name: "teammate-leases",
  sql: `
    CREATE TABLE agent_teammate_leases (
      session          text NOT NULL,
      name             text NOT NULL,
      holder           text NOT NULL,
      token            text NOT NULL,
      acquired_at_utc  text NOT NULL,
      lease_until      timestamptz NOT NULL,
      PRIMARY KEY (session, name)
    );
  `,
};
