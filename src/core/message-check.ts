import { agentNameProblem } from "./agent-name.ts";
import { timeOfId } from "./ids.ts";
import type { MailboxMessage } from "./message.ts";
import { CANONICAL_UUID, MESSAGE_KINDS, NOT_A_MESSAGE_ID, NOT_A_TASK_ID, TASK_ID } from "./message-format.ts";
import { INVALID_UTC_INSTANT, Problems, UTC_INSTANT, isPlainRecord } from "./plain-check.ts";

const FIELDS = new Set([
  "id",
  "sender",
  "recipient",
  "kind",
  "content",
  "createdAtUtc",
  "idempotencyKey",
  "inReplyTo",
  "requestId",
  "taskId",
]);
const OPTIONAL_IDS = ["inReplyTo", "requestId"] as const;
const OPTIONAL_FIELDS = [...OPTIONAL_IDS, "taskId"] as const;
const AGENT_FIELDS = ["sender", "recipient"] as const;
const KINDS: ReadonlySet<string> = new Set(MESSAGE_KINDS);

export type MessageCheck = { ok: true; message: MailboxMessage } | { ok: false; problem: string };

/**
 * The `MailboxMessage` schema (core/message.ts) by hand: accepts exactly what it
 * accepts, and returns the same frozen object, without loading zod. Every message
 * read from a mailbox goes through here; test/core/message-check.test.ts holds
 * the two to the same verdict on valid and invalid inputs.
 */
export function checkMailboxMessage(value: unknown): MessageCheck {
  const problems = new Problems();
  if (!isPlainRecord(value)) {
    problems.add("", `Invalid input: expected object, received ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`);
    return { ok: false, problem: problems.toString() };
  }
  problems.unknownKeys(value, FIELDS);
  const id = problems.matching(value, "id", CANONICAL_UUID, NOT_A_MESSAGE_ID);
  for (const key of AGENT_FIELDS) {
    const name = problems.string(value, key);
    const problem = name === undefined ? undefined : agentNameProblem(name);
    if (problem !== undefined) problems.add(key, `invalid agent name: ${problem}`);
  }
  if (typeof value.kind !== "string" || !KINDS.has(value.kind)) {
    problems.add("kind", `Invalid option: expected one of ${MESSAGE_KINDS.map((k) => JSON.stringify(k)).join("|")}`);
  }
  const content = problems.string(value, "content");
  if (content !== undefined && content.length < 1) problems.add("content", "content must not be empty");
  const createdAtUtc = problems.matching(value, "createdAtUtc", UTC_INSTANT, INVALID_UTC_INSTANT);
  const idempotencyKey = problems.matching(value, "idempotencyKey", CANONICAL_UUID, NOT_A_MESSAGE_ID);
  for (const key of OPTIONAL_IDS) {
    if (value[key] !== undefined) problems.matching(value, key, CANONICAL_UUID, NOT_A_MESSAGE_ID);
  }
  if (value.taskId !== undefined) problems.matching(value, "taskId", TASK_ID, NOT_A_TASK_ID);
  // The schema's refinements, which only mean something once every field is right.
  if (problems.empty && idempotencyKey !== id) problems.add("idempotencyKey", "idempotencyKey must equal id");
  if (problems.empty) {
    const named = timeOfId(id!);
    if (named !== undefined && named !== createdAtUtc) {
      problems.add("createdAtUtc", "createdAtUtc must be the instant its time-keyed id names");
    }
  }
  if (!problems.empty) return { ok: false, problem: problems.toString() };
  // A new object in the schema's key order, frozen as the schema's .readonly() does.
  const message: Record<string, unknown> = {
    id: value.id,
    sender: value.sender,
    recipient: value.recipient,
    kind: value.kind,
    content: value.content,
    createdAtUtc: value.createdAtUtc,
    idempotencyKey: value.idempotencyKey,
  };
  for (const key of OPTIONAL_FIELDS) if (key in value) message[key] = value[key];
  return { ok: true, message: Object.freeze(message) as MailboxMessage };
}
