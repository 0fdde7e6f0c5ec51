import { postgresStores } from "../../app/mailbox-backend.ts";
import { fileStores, type StateStores } from "../../app/state-stores.ts";
import { UsageError } from "../../core/errors.ts";
import { FileMailboxStore } from "../../mailbox/file-store.ts";
import type { MailboxStore } from "../../mailbox/store.ts";
import type { StoreSelection } from "../../store/store-url.ts";
import type { GlobalValues } from "../args.ts";
import type { AdminSession } from "../context.ts";
import { resolveWorkspace } from "../run/workspace.ts";

export interface AdminStores {
  kind: StoreSelection["kind"];
  stores: StateStores;
  mailbox: MailboxStore;
  close(): Promise<void>;
}

/** The store the flag, AGENT_STORE or config choose, as `agent run` would see it in this workspace. */
export async function configuredStore(args: GlobalValues & { store?: string }): Promise<StoreSelection> {
  const { loadSettings } = await import("../../config/load.ts");
  return loadSettings({ workspace: resolveWorkspace(args.workspace), flags: { store: args.store } }).settings.store;
}

/**
 * A session's histories, team, tasks and cron jobs for an admin command, in the
 * store the run used: the session's state dir, or the PostgreSQL store's rows
 * keyed by its id. close() releases the connection.
 */
export async function openAdminStores(args: GlobalValues & { store?: string }, session: AdminSession): Promise<AdminStores> {
  const store = await configuredStore(args);
  if (store.kind === "files") {
    return { kind: "files", stores: fileStores(session.dir), mailbox: new FileMailboxStore({ stateDir: session.dir }), close: async () => {} };
  }
  const [{ PostgresConnection }, { PgMailboxStore }] = await Promise.all([import("../../postgres/connection.ts"), import("../../postgres/mailbox-store.ts")]);
  const connection = await PostgresConnection.open(store.url, { max: 1 });
  const mailbox = new PgMailboxStore({ sql: connection.sql, session: session.meta.id });
  return {
    kind: "postgres",
    stores: postgresStores(connection.sql, session.meta.id),
    mailbox,
    async close() {
      mailbox.close();
      await connection.close();
    },
  };
}

/** Refuses `command` (one that changes a stopped session's files) when the configured store is PostgreSQL. */
export async function refuseSharedStore(args: GlobalValues & { store?: string }, command: string): Promise<void> {
  if ((await configuredStore(args)).kind === "files") return;
  throw new UsageError(
    `${command} works on the file store only; with a PostgreSQL store change the session from a run (the Lead's tools) or psql, or pass --store files for a session kept in files`,
  );
}
