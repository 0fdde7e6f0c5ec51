import { z } from "zod";
import { AgentError } from "../core/errors.ts";
import { type MailboxMessage, type MessageKind, PROTOCOL_KINDS } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * The content of the protocol messages (docs/team-protocols.md). A request's
 * text for a model is plain (the reason to stop, the plan); a response and a
 * permission request carry fields the runtime acts on, as one JSON object.
 */
export const ShutdownResponse = lazySchema(() => z.strictObject({ approve: z.boolean(), reason: z.string() }));
export type ShutdownResponse = z.infer<typeof ShutdownResponse>;

export const PlanApprovalResponse = lazySchema(() => z.strictObject({ approve: z.boolean(), feedback: z.string() }));
export type PlanApprovalResponse = z.infer<typeof PlanApprovalResponse>;

export const PermissionRequestContent = lazySchema(() =>
  z.strictObject({
    tool: z.string().min(1),
    effect: z.enum(["read", "coordinate", "edit", "execute"]),
    /** The command or path the call is about, as rules see it. */
    subject: z.string(),
    why: z.string().optional(),
    /** The call's input, so the person asked sees what it will do. */
    input: z.unknown().optional(),
    /** Set when the call writes a path another teammate owns (`owns`): the Lead's mode alone does not allow it. */
    owner: z.string().optional(),
  }),
);
export type PermissionRequestContent = z.infer<typeof PermissionRequestContent>;

export const PermissionResponse = lazySchema(() => z.strictObject({ allow: z.boolean(), reason: z.string().optional() }));
export type PermissionResponse = z.infer<typeof PermissionResponse>;

export class ProtocolMessageError extends AgentError {
  readonly code = "PROTOCOL_MESSAGE";
  readonly category = "state" as const;
}

export function isProtocolKind(kind: MessageKind): boolean {
  return (PROTOCOL_KINDS as readonly string[]).includes(kind);
}

/** A request's id: its own `requestId`, else (one written by hand) the message's id. */
export function requestIdOf(message: MailboxMessage): string {
  return message.requestId ?? message.id;
}

/** Reads a JSON protocol content; a malformed one is a clear error naming the message. */
export function parseProtocolContent<T>(schema: z.ZodType<T>, message: MailboxMessage): T {
  let value: unknown;
  try {
    value = JSON.parse(message.content);
  } catch {
    throw new ProtocolMessageError(`${message.kind} ${message.id} from ${message.sender} is not JSON; protocol messages are written by the runtime`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ProtocolMessageError(`${message.kind} ${message.id} from ${message.sender} is malformed (${parsed.error.issues[0]?.message ?? "invalid"})`);
  }
  return parsed.data;
}

/** One line describing a protocol message, for progress lines and listings. */
export function describeProtocol(message: Pick<MailboxMessage, "kind" | "sender" | "recipient" | "content">): string {
  const { kind, sender, recipient } = message;
  const json = (() => {
    try {
      return JSON.parse(message.content) as Record<string, unknown>;
    } catch {
      return {};
    }
  })();
  switch (kind) {
    case "shutdown_request":
      return `${sender} asks ${recipient} to shut down`;
    case "shutdown_response":
      return `${sender} ${json.approve === true ? "approves" : "refuses"} shutting down${json.reason ? `: ${String(json.reason)}` : ""}`;
    case "plan_approval_request":
      return `${sender} submits a plan for approval`;
    case "plan_approval_response":
      return `${sender} ${json.approve === true ? "approves" : "rejects"} ${recipient}'s plan`;
    case "permission_request":
      return `${sender} asks permission for ${String(json.tool ?? "a tool")}${json.subject ? `(${String(json.subject)})` : ""}`;
    case "permission_response":
      return `${sender} ${json.allow === true ? "allows" : "denies"} ${recipient}'s call${json.reason ? `: ${String(json.reason)}` : ""}`;
    default:
      return `${sender} -> ${recipient}: ${kind}`;
  }
}

/** As parseProtocolContent, but undefined for a malformed content (a message written by hand). */
export function tryProtocolContent<T>(schema: z.ZodType<T>, message: MailboxMessage): T | undefined {
  try {
    return parseProtocolContent(schema, message);
  } catch {
    return undefined;
  }
}
