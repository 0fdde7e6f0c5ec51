import { FileMailboxStore } from "../mailbox/file-store.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import { readRuntimeOwner } from "../storage/runtime-lock.ts";
import { FileTeamRegistry, type TeamRegistry } from "../team/team-registry.ts";
import type { SessionMeta } from "./session-meta.ts";
import type { SessionStore } from "./session-store.ts";

/** What a session is doing: a runtime owns it, it has work left for `agent drain`, or nothing. */
export type SessionState =
  | { state: "running"; pid: number; host: string }
  | { state: "pending"; work: string }
  | { state: "idle" }
  // Not this user's (session-marker.ts): its work is never reported, nor taken.
  | { state: "foreign" };

/**
 * Read-only: takes no runtime lock and creates nothing. The pending work is
 * read from `stores` (the session's rows in a PostgreSQL store), else its files.
 */
type SessionStores = { team: TeamRegistry; mailbox: MailboxStore; sharedOwner?: () => Promise<{ pid: number; host: string } | undefined> };

export async function sessionState(dir: string, stores?: SessionStores): Promise<SessionState> {
  // This machine's lock, else the store's (a Lead on another machine).
  const owner = (await readRuntimeOwner(dir)) ?? (await stores?.sharedOwner?.()) ?? null;
  if (owner !== null) return { state: "running", pid: owner.pid, host: owner.host };
  const work = stores ? await pendingWorkIn(stores) : await pendingWork(dir);
  return work === undefined ? { state: "idle" } : { state: "pending", work };
}

/** What a session list shows: foreign for a session that is not this user's (its work is not even read), else sessionState. */
export async function listedState(store: SessionStore, meta: SessionMeta, stores?: SessionStores): Promise<SessionState> {
  return store.owns(meta) ? sessionState(store.dirOf(meta.id), stores) : { state: "foreign" };
}

/**
 * What `agent drain` would find to do in the session, in words, or undefined:
 * messages waiting in (or taken from, by a runtime that stopped) a mailbox, and
 * teammates that were working or being spawned when their runtime stopped.
 * This one reads the session's files; pendingWorkIn reads any store.
 */
export async function pendingWork(dir: string): Promise<string | undefined> {
  return pendingWorkIn({ team: new FileTeamRegistry(dir), mailbox: new FileMailboxStore({ stateDir: dir }) });
}

/** pendingWork for a session's team and mailbox in whichever store holds them. */
export async function pendingWorkIn(stores: { team: TeamRegistry; mailbox: MailboxStore }): Promise<string | undefined> {
  const parts: string[] = [];
  const teammates = (await stores.team.read()).filter((t) => t.state === "running" || t.pendingTaskId !== undefined);
  if (teammates.length > 0) parts.push(`${teammates.map((t) => t.name).join(", ")} working`);
  // No mailbox yet: nothing to list (and, in files, no lock file created).
  if ((await stores.mailbox.agents()).length > 0) {
    let waiting = 0;
    for (const { counts } of await stores.mailbox.list()) waiting += counts.ready + counts.processing;
    if (waiting > 0) parts.push(`${waiting} message(s) waiting`);
  }
  return parts.length === 0 ? undefined : parts.join(", ");
}

export function describeState(status: SessionState): string {
  switch (status.state) {
    case "running":
      return `running (pid ${status.pid})`;
    case "pending":
      return `pending work: ${status.work}`;
    case "idle":
      return "idle";
    case "foreign":
      return "foreign";
  }
}
