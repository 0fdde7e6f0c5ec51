import { z } from "zod";
import type { Clock } from "./clock.ts";
import { type IdSource, timeOfId } from "./ids.ts";
import { AgentName } from "./agent-name-schema.ts";
import { InvalidMessageError } from "./errors.ts";
import { CANONICAL_UUID, MESSAGE_KINDS, NOT_A_MESSAGE_ID, NOT_A_TASK_ID, TASK_ID } from "./message-format.ts";
import { checkMailboxMessage } from "./message-check.ts";
import { lazySchema } from "./lazy-schema.ts";

export { describeIssues } from "./plain-check.ts";

export {
  assertMessageId,
  compareFifo,
  DEFAULT_MAX_CONTENT_BYTES,
  isMessageId,
  MESSAGE_KINDS,
  maxMessageFileBytes,
  NOTICE_KINDS,
  PLAIN_KINDS,
  PROTOCOL_KINDS,
  sameMessage,
  serializeMessage,
} from "./message-format.ts";

export const MessageKind = lazySchema(() => z.enum(MESSAGE_KINDS));
export type MessageKind = z.infer<typeof MessageKind>;

export const MessageId = lazySchema(() => z.string().regex(CANONICAL_UUID, NOT_A_MESSAGE_ID));

/**
 * A UTC instant in the one form `Date.prototype.toISOString()` produces, so the
 * stored text sorts the same way as the time it names.
 */
export const UtcInstant = lazySchema(() => z.iso.datetime({ offset: false, local: false, precision: 3 }));

export const MailboxMessage = lazySchema(() =>
  z
    .strictObject({
      id: MessageId,
      sender: AgentName,
      recipient: AgentName,
      kind: MessageKind,
      // Never trimmed or normalised: delivered byte-for-byte as sent.
      content: z.string().min(1, "content must not be empty"),
      createdAtUtc: UtcInstant,
      idempotencyKey: MessageId,
      // Optional, so message files written before reply ids existed stay valid.
      /** The id of the message this one answers (a result names its input). */
      inReplyTo: MessageId.optional(),
      /** Pairs a protocol request with its response (the response carries the same id). */
      requestId: MessageId.optional(),
      /** The task of the task graph (e.g. "t3") a self-claimed task, its claim notice and its result are about. */
      taskId: z.string().regex(TASK_ID, NOT_A_TASK_ID).optional(),
    })
    .refine((m) => m.idempotencyKey === m.id, {
      message: "idempotencyKey must equal id",
      path: ["idempotencyKey"],
    })
    // A time-keyed id is trusted for FIFO order before its file is read: a message
    // whose time disagrees with it is invalid (refused at send, quarantined at claim).
    .refine((m) => timeOfId(m.id) === undefined || timeOfId(m.id) === m.createdAtUtc, {
      message: "createdAtUtc must be the instant its time-keyed id names",
      path: ["createdAtUtc"],
    })
    .readonly(),
);
export type MailboxMessage = z.infer<typeof MailboxMessage>;

/** The stable id a message has as a runtime event. */
export function eventIdOf(message: MailboxMessage): string {
  return message.id;
}


/**
 * The message, checked by hand (checkMailboxMessage: exactly the schema's verdict
 * and output, without zod), or InvalidMessageError saying what is wrong. Every
 * send builds its message through here: a team's results, idle notices and tasks.
 */
export function parseMailboxMessage(value: unknown): MailboxMessage {
  const checked = checkMailboxMessage(value);
  if (!checked.ok) throw new InvalidMessageError(checked.problem);
  return checked.message;
}

export interface NewMessage {
  sender: string;
  recipient: string;
  kind: MessageKind;
  content: string;
  inReplyTo?: string;
  requestId?: string;
  taskId?: string;
}

/** Builds a validated message with a fresh id and the current time. */
export function createMessage(fields: NewMessage, ctx: { clock: Clock; ids: IdSource }): MailboxMessage {
  const now = ctx.clock.now();
  const id = ctx.ids.nextAt?.(now) ?? ctx.ids.next();
  return parseMailboxMessage({
    id,
    sender: fields.sender,
    recipient: fields.recipient,
    kind: fields.kind,
    content: fields.content,
    createdAtUtc: now.toISOString(),
    idempotencyKey: id,
    ...(fields.inReplyTo !== undefined ? { inReplyTo: fields.inReplyTo } : {}),
    ...(fields.requestId !== undefined ? { requestId: fields.requestId } : {}),
    ...(fields.taskId !== undefined ? { taskId: fields.taskId } : {}),
  });
}
