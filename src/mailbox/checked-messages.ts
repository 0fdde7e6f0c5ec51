import { InvalidMessageError } from "../core/errors.ts";
import { describeIssues, MailboxMessage } from "../core/message.ts";

/**
 * Validates messages handed to a store, remembering the ones it has seen: a
 * message a store returned or checked is frozen (the schema is readonly), so it
 * cannot have changed since and is not parsed again when it comes back to ack.
 */
export class CheckedMessages {
  readonly #seen = new WeakSet<MailboxMessage>();

  valid(input: MailboxMessage): MailboxMessage {
    if (this.#seen.has(input)) return input;
    const parsed = MailboxMessage.safeParse(input);
    if (!parsed.success) throw new InvalidMessageError(describeIssues(parsed.error));
    this.remember(parsed.data);
    return parsed.data;
  }

  remember(message: MailboxMessage): void {
    if (Object.isFrozen(message)) this.#seen.add(message);
  }
}
