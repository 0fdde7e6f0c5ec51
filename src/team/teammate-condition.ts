import type { MailboxCounts } from "../mailbox/store.ts";
import type { TeammateRecord } from "./team-registry.ts";

/**
 * What a teammate's state in team.json does not say on its own, read beside its
 * mailbox and its lease while the session's runtime is live:
 * - `waiting for a worker`: it has messages waiting, its spawn is done, and no
 *   live process holds it (a Lead with --remote-teammates, and no `agent worker` running);
 * - `stalled`: it was at work (a message claimed, or "running"), and the
 *   process that held it stopped renewing its lease (stopped, hung, killed):
 *   the next process to look takes it over from its history.
 */
export const TEAMMATE_CONDITIONS = ["waiting for a worker", "stalled"] as const;
export type TeammateCondition = (typeof TEAMMATE_CONDITIONS)[number];

export function teammateCondition(
  record: TeammateRecord,
  counts: MailboxCounts,
  context: { runtimeLive: boolean; leased: boolean },
): TeammateCondition | undefined {
  if (!context.runtimeLive || context.leased || record.state === "failed" || record.state === "shutdown") return undefined;
  if (counts.processing > 0 || record.state === "running") return "stalled";
  // Its spawn is under way (its first task goes out, then the record says so): no worker may take it yet.
  if (counts.ready > 0 && record.pendingTaskId === undefined) return "waiting for a worker";
  return undefined;
}

/** The note `agent team list` prints for a condition. */
export function conditionNote(condition: TeammateCondition, sessionId: string): string {
  return condition === "stalled"
    ? "the process running it stopped renewing its lease; the next process to look takes it over from its history"
    : `no live process runs it: start \`agent worker --session ${sessionId}\``;
}
