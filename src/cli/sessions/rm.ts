import { defineCommand } from "citty";
import type { SessionMeta } from "../../sessions/session-meta.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { TeammateHeldError } from "../../team/teammate-errors.ts";
import type { StoreSelection } from "../../store/store-url.ts";
import { selectedStore } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";

export const sessionsRmCommand = defineCommand({
  meta: { name: "rm", description: "Delete a session and all its state (refused while it runs)" },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Session: short id, id, unique id prefix or name" },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const store = new SessionStore(resolveStateDir(args));
    const meta = store.find(args.id);
    await removeSession(store, meta, await selectedStore(args));
    if (args.json) await writeJson({ removed: meta.id });
    else await writeOut(`removed session ${meta.id}${meta.name === undefined ? "" : ` (${meta.name})`}\n`);
  },
});

/** Deletes the session's files and, with a PostgreSQL store, its rows there (exit 4 while it runs). */
export async function removeSession(store: SessionStore, meta: SessionMeta, selection: StoreSelection): Promise<void> {
  if (selection.kind === "files") await store.remove(meta);
  else await removeWithRows(store, meta, selection.url);
}

/**
 * With a PostgreSQL store the session's rows go too, first (a failure there
 * leaves the session listed, to be removed again), under the session's lock in
 * the store: a Lead holding it on any machine, or a worker still running one of
 * its teammates, is refused (exit 4) and nothing is removed.
 */
async function removeWithRows(store: SessionStore, meta: SessionMeta, url: string): Promise<void> {
  const [{ PgSessionLock }, { PostgresConnection }, { PgTeammateLeases }, { deleteSessionRows }] = await Promise.all([
    import("../../postgres/session-lock.ts"),
    import("../../postgres/connection.ts"),
    import("../../postgres/teammate-leases.ts"),
    import("../../postgres/session-rows.ts"),
  ]);
  const lock = await PgSessionLock.acquire(url, meta.id, {
    where: `session ${meta.id} in the PostgreSQL store`,
    fix: `session ${meta.id} is running; wait for it to finish, then remove it`,
  });
  try {
    const connection = await PostgresConnection.open(url, { max: 1 });
    try {
      const [held] = await new PgTeammateLeases({ sql: connection.sql, session: meta.id }).live();
      if (held) throw new TeammateHeldError(held.name, held.holder);
      await deleteSessionRows(connection.sql, meta.id);
    } finally {
      await connection.close();
    }
    await store.remove(meta);
  } finally {
    await lock.release();
  }
}
