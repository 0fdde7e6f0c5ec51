import { StateDirBusyError, UnknownAgentError } from "../../core/errors.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { RuntimeLock } from "../../storage/runtime-lock.ts";
import type { TeammateRecord } from "../../team/team-registry.ts";
import { TeammateHeldError } from "../../team/teammate-errors.ts";
import { assertTeammateName } from "../../core/agent-name.ts";
import type { GlobalValues } from "../args.ts";
import { type AdminSession, requireAdminSession } from "../context.ts";
import { type AdminStores, openAdminStores } from "../store/session-stores.ts";

/** What an edit of a stopped session's teammate is given: the session and its stores. */
export interface StoppedTeam {
  session: AdminSession;
  stores: AdminStores;
  teammates: TeammateRecord[];
}

const runningFix = (session: AdminSession) =>
  `session ${session.meta.id} is running and owns its team; stop it (or let it finish) first, then run this again`;

/**
 * Runs `edit` on the teammate `name` holding the session's runtime lock: a live
 * runtime owns its team (it rewrites the records from memory), so a teammate is
 * removed or reset only in a stopped session, and no runtime can start on it
 * meanwhile. With a PostgreSQL store the lock is taken there too — the
 * session-level advisory lock a Lead on any machine holds — and the team,
 * mailbox and history are the store's rows.
 */
export async function editStoppedTeammate<T>(
  args: GlobalValues & { session?: string; store?: string; name: string },
  edit: (teammate: TeammateRecord, team: StoppedTeam) => Promise<T>,
): Promise<{ session: AdminSession; value: T }> {
  // The name first: nothing is read or locked for a bad one.
  const name = assertTeammateName(args.name);
  return withStoppedSession(args, {}, async (session, stores) => {
    const teammates = await stores.stores.team.read();
    const teammate = teammates.find((t) => t.name === name);
    if (!teammate) throw new UnknownAgentError(name, "run `agent team list` to see the teammates");
    return edit(teammate, { session, stores, teammates });
  });
}

/**
 * Runs `edit` on a session no runtime runs, holding its runtime lock (and, with
 * PostgreSQL, the session lock a Lead on any machine holds) meanwhile. With
 * `own`, a foreign session (not marked as this user's) is ForeignSessionError.
 */
export async function withStoppedSession<T>(
  args: GlobalValues & { session?: string; store?: string },
  options: { own?: boolean },
  edit: (session: AdminSession, stores: AdminStores) => Promise<T>,
): Promise<{ session: AdminSession; value: T }> {
  const session = requireAdminSession(args);
  if (options.own) new SessionStore(session.root).requireOwn(session.meta);
  let lock: RuntimeLock;
  try {
    lock = await RuntimeLock.acquire(session.dir);
  } catch (error) {
    if (!(error instanceof StateDirBusyError)) throw error;
    throw new StateDirBusyError(session.dir, error.owner, runningFix(session));
  }
  try {
    const stores = await openAdminStores(args, session);
    try {
      const shared = await lockSharedSession(stores, session);
      try {
        return { session, value: await edit(session, stores) };
      } finally {
        await shared?.release().catch(() => {});
      }
    } finally {
      await stores.close();
    }
  } finally {
    await lock.release();
  }
}

/** The PostgreSQL session lock (a Lead anywhere holds it: exit 4), or nothing for files. */
async function lockSharedSession(stores: AdminStores, session: AdminSession): Promise<{ release(): Promise<void> } | undefined> {
  if (stores.selection.kind !== "postgres") return undefined;
  const { PgSessionLock } = await import("../../postgres/session-lock.ts");
  return PgSessionLock.acquire(stores.selection.url, session.meta.id, {
    where: `session ${session.meta.id} in the PostgreSQL store`,
    fix: runningFix(session),
  });
}

/**
 * Refuses (exit 4) when a live process holds `name`'s teammate lease: an `agent
 * worker` runs it now (workers take no session lock), and changing it under
 * that worker would give its mailbox and history two writers.
 */
export async function refuseHeldTeammate(stores: AdminStores, name: string): Promise<void> {
  const lease = (await stores.leases.live()).find((l) => l.name === name);
  if (lease) throw new TeammateHeldError(name, lease.holder);
}
