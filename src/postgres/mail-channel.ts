/** The one LISTEN/NOTIFY channel of the mailbox: every send (and release, recover) notifies it. */
export const MAIL_CHANNEL = "agent_mail";

/** `<session>/<agent>`: which mailbox gained a ready message. */
export function mailPayload(session: string, agent: string): string {
  return `${session}/${agent}`;
}
