import { MailboxStorageError } from "../core/errors.ts";
import type { MailboxMessage } from "../core/message.ts";

/** A failed file-system step, told with what happened to the message. */
export function storageError(what: string, cause: unknown, outcome: string): MailboxStorageError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new MailboxStorageError(`mailbox ${what} failed: ${detail}; ${outcome}`, { cause });
}

export function notInProcessing(message: MailboxMessage, op: string): MailboxStorageError {
  return new MailboxStorageError(
    `cannot ${op} ${message.id}: it is not in processing/ of "${message.recipient}" (already recovered or finished?); ` +
      `find it with \`agent mailbox show ${message.id}\``,
  );
}

export function differentInProcessing(message: MailboxMessage, op: string): MailboxStorageError {
  return new MailboxStorageError(
    `cannot ${op} ${message.id}: processing/ holds a different message with this id; inspect it with \`agent mailbox show ${message.id}\``,
  );
}
