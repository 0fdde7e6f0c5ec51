import type { MailboxMessage } from "./message.ts";

export const EVENT_SOURCES = ["mailbox", "cron", "background"] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/**
 * Something that happened outside the agent's own turn and must reach its
 * history exactly once: a mailbox message, a fired cron job, a finished
 * background job. `eventId` is stable across retries and restarts.
 */
export interface RuntimeEvent {
  readonly eventId: string;
  readonly source: EventSource;
  readonly sender: string;
  readonly kind: string;
  readonly content: string;
  readonly createdAtUtc: string;
  /** The id of the message this event answers, when it names one. */
  readonly inReplyTo?: string;
  /** The protocol request this event belongs to, when it is one. */
  readonly requestId?: string;
  /** The task of the task graph it is about (a self-claimed task's notice and result). */
  readonly taskId?: string;
}

export function eventFromMessage(message: MailboxMessage): RuntimeEvent {
  return {
    eventId: message.id,
    source: "mailbox",
    sender: message.sender,
    kind: message.kind,
    content: message.content,
    createdAtUtc: message.createdAtUtc,
    ...(message.inReplyTo !== undefined ? { inReplyTo: message.inReplyTo } : {}),
    ...(message.requestId !== undefined ? { requestId: message.requestId } : {}),
    ...(message.taskId !== undefined ? { taskId: message.taskId } : {}),
  };
}

/**
 * The event as the user message the model sees: one JSON object. The content is
 * a JSON string inside it, so nothing in it can pose as a second envelope or
 * change the first one's fields.
 */
export function eventEnvelope(event: RuntimeEvent): string {
  return JSON.stringify({
    agent_event: {
      id: event.eventId,
      source: event.source,
      from: event.sender,
      kind: event.kind,
      sent_at: event.createdAtUtc,
      // Only when present: an event without them keeps the envelope it always had.
      ...(event.inReplyTo !== undefined ? { in_reply_to: event.inReplyTo } : {}),
      ...(event.requestId !== undefined ? { request_id: event.requestId } : {}),
      ...(event.taskId !== undefined ? { task_id: event.taskId } : {}),
    },
    content: event.content,
  });
}
