import type { PostgresConnection } from "../../postgres/connection.ts";
import type { StoreSelection } from "../../store/store-url.ts";
import { openSessionViews } from "../store/session-stores.ts";
import type { Check, LeftoverSource } from "./checks.ts";

/** The store check, and where the pending-work check reads (undefined: the files; null: nowhere, it cannot be used). */
export interface StoreCheck {
  check: Check;
  leftovers: LeftoverSource | undefined | null;
  close(): Promise<void>;
}

/**
 * The store a run would use: the files, or a PostgreSQL database that answers
 * and whose schema this build can use. Migrates nothing (a doctor changes
 * nothing): a schema behind this build is fine, since the first run brings it
 * up to date; one ahead of it is a failure, as the run would be.
 */
export async function checkStore(store: StoreSelection): Promise<StoreCheck> {
  if (store.kind === "files") {
    return { check: { id: "store", status: "ok", detail: "files (each session's state dir)" }, leftovers: undefined, close: async () => {} };
  }
  const [{ PostgresConnection: Connection }, { SCHEMA_VERSION, appliedMigrations }] = await Promise.all([
    import("../../postgres/connection.ts"),
    import("../../postgres/migrations.ts"),
  ]);
  let connection: PostgresConnection;
  try {
    connection = await Connection.open(store.url, { max: 1, migrate: false });
  } catch (error) {
    return { check: { id: "store", status: "fail", detail: (error as Error).message }, leftovers: null, close: async () => {} };
  }
  const close = () => connection.close();
  let version = 0;
  try {
    version = Math.max(0, ...(await appliedMigrations(connection.sql)).map((m) => m.version));
  } catch (error) {
    await close();
    return { check: { id: "store", status: "fail", detail: `${connection.display}: cannot read its schema version: ${(error as Error).message}` }, leftovers: null, close: async () => {} };
  }
  if (version > SCHEMA_VERSION) {
    await close();
    const detail = `${connection.display}: schema at version ${version}, newer than this agent knows (${SCHEMA_VERSION}); upgrade agent on this machine`;
    return { check: { id: "store", status: "fail", detail }, leftovers: null, close: async () => {} };
  }
  const schema =
    version === SCHEMA_VERSION
      ? `schema at version ${version}`
      : `schema at version ${version}; the first run (or \`agent store migrate\`) brings it to ${SCHEMA_VERSION}`;
  const check: Check = { id: "store", status: "ok", detail: `PostgreSQL ${connection.display} answers; ${schema}` };
  await close();
  // A database with no tables yet holds no one's work.
  if (version === 0) return { check, leftovers: { teammates: async () => [], mailboxCounts: async () => [] }, close: async () => {} };
  const views = await openSessionViews(store, { migrate: false });
  return {
    check,
    leftovers: {
      teammates: (session) => views.of(session).team.read(),
      mailboxCounts: async (session) =>
        (await views.of(session).mailbox.list()).map(({ name, counts }) => ({
          agent: name,
          open: counts.ready + counts.processing,
          quarantined: counts.quarantine,
        })),
    },
    close: () => views.close(),
  };
}
