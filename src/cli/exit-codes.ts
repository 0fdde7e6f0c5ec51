import { AgentError, type ErrorCategory } from "../core/errors.ts";

/**
 * The process exit codes. Stable: scripts branch on them and docs/output.md
 * documents them, so a code is never reused for another meaning.
 */
export const EXIT_CODES = {
  ok: 0,
  agent: 1,
  usage: 2,
  model: 3,
  busy: 4,
  state: 5,
  not_found: 6,
  internal: 70,
} as const satisfies Record<ErrorCategory | "ok" | "internal", number>;

/** A system call failure (EACCES, ENOSPC, …) is the state dir's problem, not a bug. */
export function isSystemError(error: unknown): error is Error & { code: string; syscall: string } {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) && typeof syscall === "string";
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof AgentError) return EXIT_CODES[error.category];
  if (isSystemError(error)) return EXIT_CODES.state;
  return EXIT_CODES.internal;
}
