import type { StateStores } from "../../app/state-stores.ts";
import type { Settings } from "../../config/load.ts";
import type { TeammateLeases } from "../../leases/teammate-leases.ts";
import type { MailboxStore } from "../../mailbox/store.ts";
import type { TeamRegistry } from "../../team/team-registry.ts";
import type { StoreSelection } from "../../store/store-url.ts";
import type { GlobalValues } from "../args.ts";
import type { AdminSession } from "../context.ts";
import { readRuntimeOwner } from "../../storage/runtime-lock.ts";
import { resolveWorkspace } from "../run/workspace.ts";

export interface AdminStores {
  kind: StoreSelection["kind"];
  /** The store as the settings chose it (the URL, for a PostgreSQL one). */
  selection: StoreSelection;
  stores: StateStores;
  mailbox: MailboxStore;
  leases: TeammateLeases;
  /** Who runs the session now: a runtime on this machine (its state dir's lock) or, with PostgreSQL, on any. */
  runtimeOwner(): Promise<{ pid: number; host: string } | undefined>;
  /** Who holds the session's lock in the PostgreSQL store, read without taking it; absent for files. */
  sharedOwner?: () => Promise<{ pid: number; host: string } | undefined>;
  close(): Promise<void>;
}

/** The settings `agent run` would have in this workspace, with the flag's store. */
export async function adminSettings(args: GlobalValues & { store?: string }): Promise<Settings> {
  const { loadWorkspaceSettings } = await import("../../trust/project-trust.ts");
  return loadWorkspaceSettings({ workspace: resolveWorkspace(args.workspace), flags: { store: args.store } }).settings;
}

/** The store the flag, AGENT_STORE or config choose, as `agent run` would see it in this workspace. */
export async function configuredStore(args: GlobalValues & { store?: string }): Promise<StoreSelection> {
  return (await adminSettings(args)).store;
}

/**
 * A session's mailbox, histories, team, teammate leases, tasks and cron jobs
 * for an admin command, in the store the run used — the session's state dir,
 * or the PostgreSQL store's rows keyed by its id — through the same backend the
 * runtime opens, with the configured content cap (so sizes are judged as the
 * runtime judges them). close() releases the connections.
 */
export async function openAdminStores(args: GlobalValues & { store?: string }, session: AdminSession): Promise<AdminStores> {
  const settings = await adminSettings(args);
  const { openMailboxBackend } = await import("../../app/mailbox-backend.ts");
  const backend = await openMailboxBackend(settings, { stateDir: session.dir, sessionId: session.meta.id });
  return {
    kind: backend.kind,
    selection: settings.store,
    stores: backend.state,
    mailbox: backend.store,
    leases: backend.leases,
    runtimeOwner: async () => (await readRuntimeOwner(session.dir)) ?? (await backend.sharedOwner?.()),
    ...(backend.sharedOwner ? { sharedOwner: backend.sharedOwner } : {}),
    close: () => backend.close(),
  };
}

/** A session's team and mailbox, enough to tell whether it has work left. */
export interface SessionView {
  team: TeamRegistry;
  mailbox: MailboxStore;
  /** Who holds the session's lock in the PostgreSQL store (a Lead on any machine); absent for files. */
  sharedOwner?: () => Promise<{ pid: number; host: string } | undefined>;
}

/**
 * For commands that look over every session of the state root (`agent drain`,
 * `agent doctor`): each session's team and mailbox in `selection`, all on one
 * connection for a PostgreSQL store. close() releases it.
 */
export async function openSessionViews(
  selection: StoreSelection,
  options: { migrate?: boolean } = {},
): Promise<{ of(session: { dir: string; id: string }): SessionView; close(): Promise<void> }> {
  if (selection.kind === "files") {
    const [{ FileMailboxStore }, { FileTeamRegistry }] = await Promise.all([import("../../mailbox/file-store.ts"), import("../../team/team-registry.ts")]);
    return { of: ({ dir }) => ({ team: new FileTeamRegistry(dir), mailbox: new FileMailboxStore({ stateDir: dir }) }), close: async () => {} };
  }
  const [{ PostgresConnection }, { PgMailboxStore }, { PgTeamRegistry }, { PgSessionLock }] = await Promise.all([
    import("../../postgres/connection.ts"),
    import("../../postgres/mailbox-store.ts"),
    import("../../postgres/team-registry.ts"),
    import("../../postgres/session-lock.ts"),
  ]);
  const connection = await PostgresConnection.open(selection.url, { max: 1, ...(options.migrate === false ? { migrate: false } : {}) });
  const mailboxes: { close(): void }[] = [];
  return {
    of({ id }) {
      const mailbox = new PgMailboxStore({ sql: connection.sql, session: id });
      mailboxes.push(mailbox);
      return { team: new PgTeamRegistry(connection.sql, id), mailbox, sharedOwner: () => PgSessionLock.holder(connection.sql, id) };
    },
    async close() {
      for (const mailbox of mailboxes) mailbox.close();
      await connection.close();
    },
  };
}
