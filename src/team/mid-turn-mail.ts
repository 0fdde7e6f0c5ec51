import { type AgentName, LEAD, USER } from "../core/agent-name.ts";
import { type ClaimFilter, claimable } from "../mailbox/store.ts";
import type { InboxEntry, MidTurnSource } from "../runtime/event-inbox.ts";
import { mailboxEntry } from "./mailbox-entry.ts";
import type { TeamContext } from "./team-context.ts";

/**
 * What may reach a teammate in the middle of a turn: a word from the Lead or
 * the operator. A task, a result, a peer's message or a protocol message waits
 * for the turn to end, as every message did before (config team.midTurnDelivery).
 */
export const MID_TURN_MESSAGES: ClaimFilter = { kind: "message", senders: [LEAD, USER] };

/** What may reach the Lead mid-turn: the operator's word. A teammate's message waits for the next event turn. */
export const LEAD_MID_TURN_MESSAGES: ClaimFilter = { kind: "message", senders: [USER] };

/** The teammate's mailbox as its turns look at it between steps. */
export function midTurnMail(team: TeamContext, name: AgentName): MidTurnSource {
  return { take: () => claimFor(team, name, MID_TURN_MESSAGES) };
}

/**
 * The Lead's mailbox as its turns look at it between steps: a word the pump
 * already claimed waits in the Lead's inbox, taken from there; else it is
 * claimed from the store.
 */
export function leadMidTurnMail(team: TeamContext): MidTurnSource {
  return {
    take: async () => {
      const queued = team.o.inbox.takeWhere(({ source, sender, kind }) => source === "mailbox" && claimable({ sender, kind }, LEAD_MID_TURN_MESSAGES));
      return queued ?? claimFor(team, LEAD, LEAD_MID_TURN_MESSAGES);
    },
  };
}

async function claimFor(team: TeamContext, name: AgentName, only: ClaimFilter): Promise<InboxEntry | undefined> {
  const message = await team.o.store.claim(name, only);
  if (!message) return undefined;
  team.emit({ type: "mailbox", op: "claim", agent: name, id: message.id, from: message.sender, kind: message.kind });
  return mailboxEntry(team, name, message);
}
