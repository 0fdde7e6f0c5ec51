import { type AgentName, LEAD, USER } from "../core/agent-name.ts";
import type { ClaimFilter } from "../mailbox/store.ts";
import type { MidTurnSource } from "../runtime/event-inbox.ts";
import { mailboxEntry } from "./mailbox-entry.ts";
import type { TeamContext } from "./team-context.ts";

/**
 * What may reach a teammate in the middle of a turn: a word from the Lead or
 * the operator. A task, a result, a peer's message or a protocol message waits
 * for the turn to end, as every message did before (config team.midTurnDelivery).
 */
export const MID_TURN_MESSAGES: ClaimFilter = { kind: "message", senders: [LEAD, USER] };

/** The teammate's mailbox as its turns look at it between steps. */
export function midTurnMail(team: TeamContext, name: AgentName): MidTurnSource {
  return {
    take: async () => {
      const message = await team.o.store.claim(name, MID_TURN_MESSAGES);
      if (!message) return undefined;
      team.emit({ type: "mailbox", op: "claim", agent: name, id: message.id, from: message.sender, kind: message.kind });
      return mailboxEntry(team, name, message);
    },
  };
}
