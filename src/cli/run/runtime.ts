import type { PermissionAsker } from "../../permissions/policy.ts";
import { type LeadContext, type LeadRuntime, buildLead } from "../../runtime/lead.ts";
import type { RunObserver } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { RuntimeLock } from "../../storage/runtime-lock.ts";
import type { RuntimeSetup } from "./runtime-args.ts";
import { VERSION } from "../version.ts";
import type { RunStop } from "./stop.ts";

export interface RuntimeRequest {
  setup: RuntimeSetup;
  stop: RunStop;
  observer?: RunObserver;
  teamObserver?: (event: TeamEvent) => void;
  asker?: PermissionAsker;
  /** Told each tool call the permission policy denied. */
  onPermissionDenied?: LeadContext["onPermissionDenied"];
  /** Called once the runtime is closed, before the lock is released: e.g. stop a spinner. */
  onClosing?: () => void;
  onBudgetExhausted?: LeadContext["onBudgetExhausted"];
}

/**
 * Owns the state dir for the life of `body`: takes the runtime lock (or waits
 * for it with --wait-lock, within the stop's deadline), builds the runtime —
 * which restores the team and recovers interrupted work — runs `body`, then
 * closes the runtime and releases the lock, newest first, also on failure.
 */
export async function withRuntime<T>(request: RuntimeRequest, body: (lead: LeadRuntime) => Promise<T>): Promise<T> {
  const { setup, stop } = request;
  const lock = await RuntimeLock.acquire(setup.stateDir, {
    waitMs: setup.waitLock ? stop.remainingMs() : 0,
    onLost: (error) => stop.abort(`lost the runtime lock on ${setup.stateDir} (${error.message}); another runtime may own it now`),
  });
  try {
    const lead = await buildLead(setup.settings, {
      stateDir: setup.stateDir,
      workspace: setup.workspace,
      observer: request.observer,
      teamObserver: request.teamObserver,
      asker: request.asker,
      version: VERSION,
      onPermissionDenied: request.onPermissionDenied,
      sandbox: setup.sandbox,
      onBudgetExhausted: request.onBudgetExhausted,
    });
    try {
      return await body(lead);
    } finally {
      request.onClosing?.();
      await lead.close();
    }
  } finally {
    await lock.release();
  }
}
