import { normalize, resolve } from "node:path";
import { AgentError } from "../core/errors.ts";
import type { PathFence } from "../core/tool.ts";
import { type Root, relativeTo } from "./open-beneath.ts";

/** What the check of a write's landing place needs of the write's scope (FileScope). */
export interface LandingScope {
  fence?: PathFence;
  approvedGuarded?: (absolute: string) => boolean;
}

/**
 * The one check every write into the user's tree passes once its directory is
 * open beneath the workspace and `display` (relative to the root) is where the
 * file really is: a guarded file (the agent's config, git's files, a hook's
 * script: the fence's guardedWrite) is written only by its own path — the
 * path the permission check or the person saw; a symlink swapped in since (or
 * any link) must not carry a write there — and, for a replay, only when a
 * person named that very file (`approvedGuarded`).
 */
export function assertGuardedLanding(root: Root, scope: LandingScope, display: string, requested: string): void {
  const absolute = resolve(root.real, display);
  const reason = scope.fence?.guardedWrite?.(absolute);
  if (reason === undefined) return;
  const asked = normalize(relativeTo(root, requested, requested) || ".");
  if (asked !== display) throw new GuardedTargetError(requested, display, reason);
  if (scope.approvedGuarded && !scope.approvedGuarded(absolute)) throw new GuardedNotNamedError(display, reason);
}

/** A write reached a guarded file by another path than its own (through a symlink). */
export class GuardedTargetError extends AgentError {
  readonly code = "GUARDED_TARGET";
  readonly category = "usage" as const;
  constructor(
    readonly requested: string,
    readonly target: string,
    readonly reason: string,
  ) {
    super(
      `path ${JSON.stringify(requested)} leads to ${target} (${reason}); file tools write such a file only by its own path, which needs an allow rule naming it`,
    );
  }
}

/** A replay (agent rewind) reached a guarded file that no person named for it. */
export class GuardedNotNamedError extends AgentError {
  readonly code = "GUARDED_NOT_NAMED";
  readonly category = "usage" as const;
  constructor(
    readonly target: string,
    readonly reason: string,
  ) {
    super(`${target} is ${reason}: agent rewind puts it back only when you name it (--include-guarded ${target})`);
  }
}
