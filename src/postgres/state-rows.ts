import type { z } from "zod";
import { AgentError } from "../core/errors.ts";
import { describeIssues } from "../core/message.ts";

/** Where a row lives, as messages name it: `postgres:<table>/<session>/<key>`. */
export function rowName(table: string, session: string, key: string): string {
  return `postgres:${table}/${session}/${key}`;
}

/** A row of the state store that cannot be trusted. Never skipped or read as empty. */
export class CorruptStateRowError extends AgentError {
  readonly code = "CORRUPT_STATE_ROW";
  readonly category = "state" as const;
  constructor(
    readonly where: string,
    reason: string,
  ) {
    super(`corrupt row ${where}: ${reason}; fix or delete the row (psql), then retry`);
  }
}

/**
 * A record row read back through its schema: a row that is not JSON or not
 * valid (written around the store) is corrupt state, never skipped or read as
 * empty — as a damaged state file is.
 */
export function parseRow<T>(text: string, schema: { safeParse(value: unknown): z.ZodSafeParseResult<T> }, where: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CorruptStateRowError(where, "not valid JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new CorruptStateRowError(where, describeIssues(parsed.error));
  return parsed.data;
}

/** A statement of the state store failed: one line saying which and what was kept. */
export class StateStoreError extends AgentError {
  readonly code = "STATE_STORE";
  readonly category = "state" as const;
}

/** `cause` as it is when it is already ours (a task refused, a corrupt row), else wrapped. */
export function stateError(what: string, cause: unknown, outcome: string): AgentError {
  if (cause instanceof AgentError) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StateStoreError(`PostgreSQL store: ${what} failed: ${detail}; ${outcome}`, { cause });
}

/** The advisory-lock key of a session's `what` (its task graph, its cron jobs, its runtime). */
export function lockKey(session: string, what: string): string {
  return `agent:${what}:${session}`;
}
