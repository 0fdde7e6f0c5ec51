import type { AgentName } from "../core/agent-name.ts";
import type { MailboxMessage } from "../core/message.ts";
import { eventFromMessage } from "../core/runtime-event.ts";
import type { InboxEntry } from "../runtime/event-inbox.ts";
import type { TeamContext } from "./team-context.ts";

/**
 * A message `agent` claimed, as an event a runner takes in: acknowledged (to
 * done/) once it is in the history, released (back to ready/) if never
 * processed; each move reported as a mailbox event.
 */
export function mailboxEntry(team: TeamContext, agent: AgentName, message: MailboxMessage): InboxEntry {
  const moved = (op: "ack" | "release") => team.emit({ type: "mailbox", op, agent, id: message.id, from: message.sender, kind: message.kind });
  return {
    event: eventFromMessage(message),
    owner: {
      acknowledge: async () => {
        await team.o.store.ack(message);
        moved("ack");
      },
      release: async () => {
        await team.o.store.release(message);
        moved("release");
      },
    },
  };
}
