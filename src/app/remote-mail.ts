import { LEAD } from "../core/agent-name.ts";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import type { MailboxBackend } from "./mailbox-backend.ts";

/**
 * A Lead's runtime on a store other processes write to (PostgreSQL): mail they
 * send has no in-process sender to poke its consumer, so the store's
 * notifications do — the Lead's mailbox is pumped (results from workers, `agent
 * mailbox send`), and a teammate this runtime runs claims what was sent to it
 * (`agent team send`, a worker's teammate) now, not after its current message.
 * Returns what stops the watches.
 */
export async function watchRemoteMail(mailbox: MailboxBackend, team: TeammateRuntime, warn: (message: string) => void): Promise<(() => void)[]> {
  const lead = await mailbox.wakeups.watch(LEAD, () => void team.pumpLead().catch((error: Error) => warn(`mailbox: ${error.message}`)));
  const teammates = await mailbox.teamWakeups?.watch((agent) => {
    if (agent !== undefined && agent !== LEAD) team.pokeHeld(agent);
  });
  return [() => lead.stop(), ...(teammates ? [() => teammates.stop()] : [])];
}
