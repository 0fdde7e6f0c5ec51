import type { Migration } from "./index.ts";

/**
 * A session's shared state besides its mailboxes, keyed by session as the
 * file backend's state dir is. Every record is kept as the JSON text the file
 * backend writes (JSON escapes the NUL character that PostgreSQL text and
 * jsonb cannot hold), validated by the same schema when read.
 *
 * - `agent_history`: each agent's history, append-only, one row per record in
 *   a per-agent sequence; an archived history (a freed teammate name) keeps
 *   its rows under the agent name `removed/<name>-<stamp>`.
 * - `agent_teammates`: the team registry, one row per teammate; `added` keeps
 *   the order of teammates created in the same millisecond.
 * - `agent_tasks`: the task graph, one row per task.
 * - `agent_cron_jobs`: the durable cron jobs.
 * - `agent_session_owners`: who holds a session's runtime lock (an advisory
 *   lock); informational, for the busy message.
 */
export const stateMigration: Migration = {
  version: 2,
  name: "histories, team, tasks, cron",
  sql: `
    CREATE TABLE agent_history (
      session text NOT NULL,
      agent   text NOT NULL,
      seq     bigint NOT NULL,
      record  text NOT NULL,
      PRIMARY KEY (session, agent, seq)
    );
    CREATE TABLE agent_teammates (
      session        text NOT NULL,
      name           text NOT NULL,
      created_at_utc text NOT NULL,
      added          bigint GENERATED ALWAYS AS IDENTITY,
      record         text NOT NULL,
      PRIMARY KEY (session, name)
    );
    CREATE TABLE agent_tasks (
      session text NOT NULL,
      id      text NOT NULL,
      number  integer NOT NULL,
      record  text NOT NULL,
      PRIMARY KEY (session, id)
    );
    CREATE TABLE agent_cron_jobs (
      session        text NOT NULL,
      id             text NOT NULL,
      created_at_utc text NOT NULL,
      record         text NOT NULL,
      PRIMARY KEY (session, id)
    );
    CREATE TABLE agent_session_owners (
      session text PRIMARY KEY,
      pid     integer NOT NULL,
      host    text NOT NULL,
      since   timestamptz NOT NULL DEFAULT now()
    );
  `,
};
