/** The one LISTEN/NOTIFY channel of the mailbox: every send (and release, recover) notifies it. */
export const MAIL_CHANNEL = "agent_mail";

/** `<session>/<agent>`: which mailbox gained a ready message. */
export function mailPayload(session: string, agent: string): string {
  return `${session}/${agent}`;
}

/**
 * The LISTEN/NOTIFY channel of team changes: a teammate's record stored or
 * removed, a teammate lease given up. The payload is the session's id.
 */
export const TEAM_CHANNEL = "agent_team";
