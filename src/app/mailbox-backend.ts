import { PgFileJournal } from "../postgres/file-journal-rows.ts";
import { basename } from "node:path";
import type { SQL } from "bun";
import type { Settings } from "../config/load.ts";
import { FileMailboxStore } from "../mailbox/file-store.ts";
import { FileMailWakeups } from "../mailbox/file-wakeups.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { MailWakeups } from "../mailbox/wakeups.ts";
import { PostgresConnection } from "../postgres/connection.ts";
import { PgMailWakeups } from "../postgres/mail-wakeups.ts";
import { PgMailboxStore } from "../postgres/mailbox-store.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { FileTeammateLeases } from "../leases/file-leases.ts";
import type { TeammateLeases } from "../leases/teammate-leases.ts";
import { PgTeammateLeases } from "../postgres/teammate-leases.ts";
import { PgAttachments } from "../postgres/attachment-rows.ts";
import { PgCronTable } from "../postgres/cron-table.ts";
import { PgHistoryBackend } from "../postgres/history-store.ts";
import { PgTaskTable } from "../postgres/task-table.ts";
import { PgTeamRegistry } from "../postgres/team-registry.ts";
import { PgTeamWakeups } from "../postgres/team-wakeups.ts";
import { PgSessionLock } from "../postgres/session-lock.ts";
import type { TeamWakeups } from "../team/team-watch.ts";
import { type StateStores, fileStores } from "./state-stores.ts";

/** A session's mailbox as the settings choose it: the store, its wake-ups, and what closes them. */
export interface MailboxBackend {
  kind: Settings["store"]["kind"];
  store: MailboxStore;
  /** Mail that arrives from other processes (workers, `agent mailbox send`). */
  wakeups: MailWakeups;
  /** Which process runs which teammate (docs/worker.md), in the same store. */
  leases: TeammateLeases;
  /** The session's histories, team, task graph and cron jobs, in the same store. */
  state: StateStores;
  /** Changes of the team made by other processes, where the store notifies them (PostgreSQL); else polled. */
  teamWakeups?: TeamWakeups;
  /**
   * Who holds the session's runtime lock in the store (PostgreSQL: a Lead on any
   * machine), read without taking it; absent for files, whose lock is the state dir's.
   */
  sharedOwner?: () => Promise<{ pid: number; host: string } | undefined>;
  close(): Promise<void>;
}

export interface MailboxBackendContext {
  /** The session's state dir (the file store's home). */
  stateDir: string;
  /** The session's id: the PostgreSQL store's rows are keyed by it. */
  sessionId?: string;
  /** The file store's file-system calls (tests inject failures). */
  fs?: FsOps;
}

/**
 * Opens the mailbox of one session: files under its state dir, or rows of the
 * PostgreSQL store keyed by its id. A database that cannot be reached fails
 * here, before anything else is built (StoreConnectionError, exit 5).
 */
export async function openMailboxBackend(settings: Pick<Settings, "store" | "mailbox">, context: MailboxBackendContext): Promise<MailboxBackend> {
  const maxContentBytes = settings.mailbox.maxContentBytes;
  if (settings.store.kind === "files") {
    const wakeups = new FileMailWakeups({ stateDir: context.stateDir });
    return {
      kind: "files",
      store: new FileMailboxStore({ stateDir: context.stateDir, fs: context.fs, maxContentBytes }),
      wakeups,
      leases: new FileTeammateLeases(context.stateDir),
      state: fileStores(context.stateDir),
      close: () => wakeups.close(),
    };
  }
  const connection = await PostgresConnection.open(settings.store.url);
  const session = context.sessionId ?? basename(context.stateDir);
  const store = new PgMailboxStore({ sql: connection.sql, session, maxContentBytes });
  const wakeups = new PgMailWakeups({ sql: connection.sql, session });
  const teamWakeups = new PgTeamWakeups({ sql: connection.sql, session });
  return {
    kind: "postgres",
    store,
    wakeups,
    leases: new PgTeammateLeases({ sql: connection.sql, session }),
    state: postgresStores(connection.sql, session, store),
    teamWakeups,
    sharedOwner: () => PgSessionLock.holder(connection.sql, session),
    async close() {
      store.close();
      await teamWakeups.close();
      await wakeups.close();
      await connection.close();
    },
  };
}

/** A session's state stores on one PostgreSQL connection pool, its rows keyed by the session's id. */
export function postgresStores(sql: SQL, session: string, mailbox?: PgMailboxStore): StateStores {
  return {
    histories: new PgHistoryBackend(sql, session),
    team: new PgTeamRegistry(sql, session, mailbox),
    tasks: new PgTaskTable(sql, session),
    cron: new PgCronTable(sql, session),
    files: new PgFileJournal(sql, session),
    attachments: new PgAttachments(sql, session),
  };
}
