import { FileMailboxStore } from "../mailbox/file-store.ts";
import { readRuntimeOwner } from "../storage/runtime-lock.ts";
import { FileTeamRegistry } from "../team/team-registry.ts";

/** What a session is doing: a runtime owns it, it has work left for `agent drain`, or nothing. */
export type SessionState = { state: "running"; pid: number; host: string } | { state: "pending"; work: string } | { state: "idle" };

/** Read-only: takes no runtime lock and creates nothing. */
export async function sessionState(dir: string): Promise<SessionState> {
  const owner = await readRuntimeOwner(dir);
  if (owner !== null) return { state: "running", pid: owner.pid, host: owner.host };
  const work = await pendingWork(dir);
  return work === undefined ? { state: "idle" } : { state: "pending", work };
}

/**
 * What `agent drain` would find to do in the session, in words, or undefined:
 * messages waiting in (or taken from, by a runtime that stopped) a mailbox, and
 * teammates that were working or being spawned when their runtime stopped.
 */
export async function pendingWork(dir: string): Promise<string | undefined> {
  const parts: string[] = [];
  const teammates = (await new FileTeamRegistry(dir).read()).filter((t) => t.state === "running" || t.pendingTaskId !== undefined);
  if (teammates.length > 0) parts.push(`${teammates.map((t) => t.name).join(", ")} working`);
  const store = new FileMailboxStore({ stateDir: dir });
  if ((await store.agents()).length > 0) {
    let waiting = 0;
    for (const { counts } of await store.list()) waiting += counts.ready + counts.processing;
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
  }
}
