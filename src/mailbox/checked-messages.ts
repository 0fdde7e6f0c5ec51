import { InvalidMessageError } from "../core/errors.ts";
import type { MailboxMessage } from "../core/message.ts";
import { checkMailboxMessage } from "../core/message-check.ts";

/**
 * Validates messages handed to a store, remembering the ones it has seen: a
 * message a store returned or checked is frozen (the schema is readonly), so it
 * cannot have changed since and is not checked again when it comes back to ack.
 * The check is the hand-written checkMailboxMessage, as strict as the schema,
 * so a store's calls load and run no zod.
 */
export class CheckedMessages {
  readonly #seen = new WeakSet<MailboxMessage>();

  valid(input: MailboxMessage): MailboxMessage {
    if (this.#seen.has(input)) return input;
    const parsed = checkMailboxMessage(input);
    if (!parsed.ok) throw new InvalidMessageError(parsed.problem);
    this.remember(parsed.message);
    return parsed.message;
  }

  remember(message: MailboxMessage): void {
    if (Object.isFrozen(message)) this.#seen.add(message);
  }
}
