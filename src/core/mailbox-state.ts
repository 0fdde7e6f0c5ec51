export const MAILBOX_STATES = ["ready", "processing", "done", "quarantine"] as const;
export type MailboxState = (typeof MAILBOX_STATES)[number];

export function isMailboxState(value: string): value is MailboxState {
  return (MAILBOX_STATES as readonly string[]).includes(value);
}
