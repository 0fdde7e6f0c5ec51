import { AgentError } from "../core/errors.ts";

/** `isolation: "worktree"` asked for where there is no git repository (or no commit to branch from). */
export class WorktreeUnavailableError extends AgentError {
  readonly code = "WORKTREE_UNAVAILABLE";
  readonly category = "usage" as const;
}

/** A git command the runtime needed failed; the message carries git's own line. */
export class WorktreeGitError extends AgentError {
  readonly code = "WORKTREE_GIT_FAILED";
  readonly category = "state" as const;
}

/** The Lead's working tree cannot take a merge now: uncommitted changes, a merge in progress, a detached HEAD. */
export class MergeRefusedError extends AgentError {
  readonly code = "MERGE_REFUSED";
  readonly category = "usage" as const;
}

/** The teammate's branch conflicts with the Lead's: the merge was aborted, nothing changed. */
export class MergeConflictError extends AgentError {
  readonly code = "MERGE_CONFLICT";
  readonly category = "state" as const;
  constructor(
    readonly branch: string,
    readonly files: readonly string[],
    message: string,
  ) {
    super(message);
  }
}

/**
 * The repository's own config (or a worktree's `.git` pointer) would make the
 * runtime's git run a program or read another repository: nothing is run there.
 */
export class UnsafeRepositoryError extends AgentError {
  readonly code = "UNSAFE_REPOSITORY";
  readonly category = "usage" as const;
}
