import { z } from "zod";
import type { Clock } from "./clock.ts";
import { type IdSource, timeOfId } from "./ids.ts";
import { AgentName } from "./agent-name.ts";
import { InvalidMessageError, InvalidMessageIdError } from "./errors.ts";

/** The default cap on a message's content, in UTF-8 bytes (config `mailbox.maxContentBytes`). */
export const DEFAULT_MAX_CONTENT_BYTES = 1024 * 1024;

/**
 * The largest message file that can hold content of `maxContentBytes`: JSON
 * escaping writes a control character as six bytes (`\u0000`), plus the fixed
 * fields. A larger file is refused without being read.
 */
export function maxMessageFileBytes(maxContentBytes: number): number {
  return maxContentBytes * 6 + 4096;
}

/** The kinds a person (or `agent mailbox send`) writes: work, a note, an answer. */
export const PLAIN_KINDS = ["task", "message", "result"] as const;
/**
 * Requests and responses between the Lead and a teammate (docs/team-protocols.md):
 * a response carries its request's `requestId` and names the request in `inReplyTo`.
 */
export const PROTOCOL_KINDS = [
  "shutdown_request",
  "shutdown_response",
  "plan_approval_request",
  "plan_approval_response",
  "permission_request",
  "permission_response",
] as const;
/** What the runtime tells the Lead by itself: a self-claiming teammate took a task (docs/team.md#self-claiming-teammates). */
export const NOTICE_KINDS = ["task_claimed"] as const;
export const MESSAGE_KINDS = [...PLAIN_KINDS, ...PROTOCOL_KINDS, ...NOTICE_KINDS] as const;
export const MessageKind = z.enum(MESSAGE_KINDS);
export type MessageKind = z.infer<typeof MessageKind>;

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isMessageId(value: string): boolean {
  return CANONICAL_UUID.test(value);
}

export function assertMessageId(value: string): string {
  if (!isMessageId(value)) throw new InvalidMessageIdError(value);
  return value;
}

export const MessageId = z.string().regex(CANONICAL_UUID, "must be a canonical lowercase UUID");

/**
 * A UTC instant in the one form `Date.prototype.toISOString()` produces, so the
 * stored text sorts the same way as the time it names.
 */
export const UtcInstant = z.iso.datetime({ offset: false, local: false, precision: 3 });

export const MailboxMessage = z
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
    taskId: z.string().regex(/^t[1-9][0-9]{0,8}$/, 'must be a task id such as "t3"').optional(),
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
  .readonly();
export type MailboxMessage = z.infer<typeof MailboxMessage>;

/** The stable id a message has as a runtime event. */
export function eventIdOf(message: MailboxMessage): string {
  return message.id;
}

/** One line summarising what is wrong, for errors and quarantine reasons. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

export function parseMailboxMessage(value: unknown): MailboxMessage {
  const parsed = MailboxMessage.safeParse(value);
  if (!parsed.success) throw new InvalidMessageError(describeIssues(parsed.error));
  return parsed.data;
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

/**
 * Field order is fixed so the same message always serialises to the same bytes.
 * Absent optional fields are left out, so a message without them keeps the bytes
 * it had before they existed.
 */
export function serializeMessage(message: MailboxMessage): string {
  const { id, sender, recipient, kind, content, createdAtUtc, idempotencyKey, inReplyTo, requestId, taskId } = message;
  return `${JSON.stringify({ id, sender, recipient, kind, content, createdAtUtc, idempotencyKey, inReplyTo, requestId, taskId }, null, 2)}\n`;
}

export function sameMessage(a: MailboxMessage, b: MailboxMessage): boolean {
  return serializeMessage(a) === serializeMessage(b);
}

/** FIFO order: `(createdAtUtc, id)`. Both are fixed-width canonical text. */
export function compareFifo(
  a: { createdAtUtc: string; id: string },
  b: { createdAtUtc: string; id: string },
): number {
  if (a.createdAtUtc !== b.createdAtUtc) return a.createdAtUtc < b.createdAtUtc ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}
