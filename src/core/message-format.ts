import { InvalidMessageIdError } from "./errors.ts";
import type { MailboxMessage } from "./message.ts";

// The parts of a message that need no schema library: ids, kinds, the size cap,
// the bytes on disk and FIFO order. Zod-free, so the reading commands and the
// mailbox's claim path load none (see plain-check.ts).

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
/**
 * What the runtime tells the Lead by itself: a self-claiming teammate took a
 * task (docs/team.md#self-claiming-teammates); a teammate has nothing left to
 * do (docs/team.md#idle-notices).
 */
export const NOTICE_KINDS = ["task_claimed", "idle"] as const;
export const MESSAGE_KINDS = [...PLAIN_KINDS, ...PROTOCOL_KINDS, ...NOTICE_KINDS] as const;

/** A task of the task graph ("t3"), as a message's `taskId` names it. */
export const TASK_ID = /^t[1-9][0-9]{0,8}$/;
export const NOT_A_TASK_ID = 'must be a task id such as "t3"';

export const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const NOT_A_MESSAGE_ID = "must be a canonical lowercase UUID";

export function isMessageId(value: string): boolean {
  return CANONICAL_UUID.test(value);
}

export function assertMessageId(value: string): string {
  if (!isMessageId(value)) throw new InvalidMessageIdError(value);
  return value;
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
