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
  // 128 + the signal's number, as shells report a process a signal ended.
  interrupted: 130,
  terminated: 143,
} as const satisfies Record<ErrorCategory | "ok" | "internal", number>;

/** What each exit code means, in the words of docs/output.md: for `--output json` error objects. */
export const EXIT_MEANINGS: Record<keyof typeof EXIT_CODES, string> = {
  ok: "success",
  agent: "an agent run ended in error",
  usage: "usage or configuration error",
  model: "model / API error",
  busy: "busy: owned by another live runtime",
  state: "state or storage error",
  not_found: "not found",
  internal: "unexpected internal error (a bug: rerun with --verbose and report it)",
  interrupted: "interrupted by Ctrl-C (SIGINT)",
  terminated: "stopped by SIGTERM",
};

/** A system call failure (EACCES, ENOSPC, …) is the state dir's problem, not a bug. */
export function isSystemError(error: unknown): error is Error & { code: string; syscall: string } {
  if (!(error instanceof Error)) return false;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) && typeof syscall === "string";
}

/** The exit code's name (`usage`, `busy`, …), the key of EXIT_CODES and EXIT_MEANINGS. */
export function exitKindFor(error: unknown): keyof typeof EXIT_CODES {
  if (error instanceof AgentError) return error.category;
  if (isSystemError(error)) return "state";
  return "internal";
}

export function exitCodeFor(error: unknown): number {
  return EXIT_CODES[exitKindFor(error)];
}
