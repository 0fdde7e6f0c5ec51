import { type AgentName, LEAD } from "../core/agent-name.ts";
import { DuplicateMessageIdError } from "../core/errors.ts";
import { derivedId } from "./derived-id.ts";
import type { TeamContext, Worker } from "./team-context.ts";
import type { TeamMail } from "./team-mail.ts";
import type { TeammateProtocols } from "./teammate-protocols.ts";

/**
 * Stops the teammate as an approved shutdown does when a team hook (TeammateIdle,
 * TaskCompleted) answered `continue: false` for it: the Lead told why (under an
 * id derived from the last message worked, so a replay tells it once), then shut
 * down in team.json, and what waits in its mailbox answered "shut down" to its
 * senders. Returns whether it stopped; its loop then ends.
 */
export async function stopIfHookAsked(
  team: TeamContext,
  mail: TeamMail,
  protocols: TeammateProtocols,
  { name, worker, lastWorked }: { name: AgentName; worker: Worker; lastWorked: string },
): Promise<boolean> {
  const stop = team.o.takeStop?.(name);
  if (stop === undefined) return false;
  const why = `was shut down by its ${stop.event} hook ("continue": false)`;
  try {
    await mail.deliver(name, LEAD, "message", `${name} ${why}: ${stop.reason}`, derivedId(lastWorked, "hook-stop"), lastWorked);
  } catch (error) {
    if (!(error instanceof DuplicateMessageIdError)) throw error;
  }
  worker.retired = true;
  await team.setState(name, "shutdown");
  worker.runner?.close();
  worker.runner = undefined;
  // A message the last ack claimed goes back to ready/ and is answered with the rest.
  worker.current = undefined;
  await protocols.settleRetired(name, why);
  return true;
}
