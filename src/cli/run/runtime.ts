import { join } from "node:path";
import { StateDirBusyError } from "../../core/errors.ts";
import type { PermissionAsker } from "../../permissions/policy.ts";
import { type LeadContext, type LeadRuntime, buildLead } from "../../app/lead.ts";
import type { RunObserver } from "../../runtime/run-types.ts";
import { ensureAgentGitignore } from "../../sessions/gitignore.ts";
import type { SessionMeta } from "../../sessions/session-meta.ts";
import { forkSession } from "../../sessions/session-fork.ts";
import { openPlannedSession } from "../../sessions/session-plan.ts";
import { removeRunFlags, writeRunFlags, writeRunFlagsOffLoop } from "../../sessions/run-flags.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { RuntimeLock } from "../../storage/runtime-lock.ts";
import { PgSessionLock } from "../../postgres/session-lock.ts";
import type { RuntimeSetup } from "./runtime-args.ts";
import { VERSION } from "../version.ts";
import { userConfigDir } from "../../config/locations.ts";
import { teamEventsFor } from "./unattended.ts";
import { TmuxPanes } from "../terminal/tmux-panes.ts";
import { LEAD } from "../../core/agent-name.ts";
import type { RunStop } from "./stop.ts";

export interface RuntimeRequest {
  setup: RuntimeSetup;
  stop: RunStop;
  observer?: RunObserver;
  teamObserver?: (event: TeamEvent) => void;
  asker?: PermissionAsker;
  hostHooks?: LeadContext["hostHooks"];
  /** Told each tool call the permission policy denied. */
  onPermissionDenied?: LeadContext["onPermissionDenied"];
  /** Called once the runtime is closed, before the lock is released: e.g. stop a spinner. */
  onClosing?: () => void;
  onBudgetExhausted?: LeadContext["onBudgetExhausted"];
  tracing?: LeadContext["tracing"];
}

/** The session a runtime owns: who it is and where its state lives. */
export interface OpenSession {
  meta: SessionMeta;
  dir: string;
  /**
   * Keeps `prompt` (masked, clipped) as the session's first prompt when it has none
   * yet. Call once the prompt's turn is in the history: a run killed before that
   * accepted nothing, and the session must not show a prompt `drain` cannot find.
   */
  accepted(prompt: string): void;
}

/**
 * Owns the session for the life of `body`: opens it (creating a new one),
 * takes its runtime lock (or waits for it with --wait-lock, within the stop's
 * deadline), builds the runtime — which restores the team and recovers
 * interrupted work — runs `body`, then closes the runtime and releases the lock,
 * newest first, also on failure. Other sessions of the root are not touched.
 */
export async function withRuntime<T>(request: RuntimeRequest, body: (lead: LeadRuntime, session: OpenSession) => Promise<T>): Promise<T> {
  const { setup, stop } = request;
  const store = new SessionStore(setup.stateRoot);
  // The default root is inside the workspace: keep it (and personal settings) out of git.
  if (setup.stateRoot === join(setup.workspace, ".agent", "state")) ensureAgentGitignore(setup.workspace);
  const opened = await openPlannedSession(store, setup.session);
  const dir = store.dirOf(opened.id);
  const lock = await acquireSessionLock(dir, opened, setup.waitLock ? stop.remainingMs() : 0, (error) =>
    stop.abort(`lost the runtime lock on session ${opened.id} (${error.message}); another runtime may own it now`),
  );
  // A new session whose runtime never got built (no API key, a bad hook) is
  // removed again, so a failed start leaves no empty session behind.
  let built = false;
  let discard = false;
  let shared: PgSessionLock | undefined;
  let flagsWritten: Promise<void> | undefined;
  try {
    // With a PostgreSQL store the session is shared with other machines: its
    // runtime lock is there too (workers take teammates, never this one).
    if (setup.settings.store.kind === "postgres") {
      shared = await PgSessionLock.acquire(setup.settings.store.url, opened.id, {
        waitMs: setup.waitLock ? stop.remainingMs() : 0,
        where: `session ${opened.id} in the PostgreSQL store`,
        fix: busyFix(opened),
      });
    }
    const forkOf = setup.session.kind === "new" ? setup.session.forkOf : undefined;
    if (forkOf) await forkSession(forkOf, store.dirOf(forkOf.id), dir);
    // A session this run just created was last used now: rewriting its meta would
    // cost two fsyncs before the first request. A named one may be another run's.
    const createdHere = setup.session.kind === "new" && setup.session.name === undefined;
    let meta = createdHere ? opened : store.touch(opened);
    // Such a session has no earlier run's flags to keep should its runtime fail to
    // build: its flags are written while the runtime is built (their two fsyncs off
    // the event loop, not before the first request) and are durable before the body
    // runs, so before anything of this run can be left for `agent drain`.
    if (createdHere) {
      flagsWritten = writeRunFlagsOffLoop(dir, opened.id, setup.runFlags, store.marker);
      flagsWritten.catch(() => {});
    }
    const panes = teammatePanes(request, opened.id);
    const lead = await buildLead(setup.settings, {
      stateDir: dir,
      sessionId: opened.id,
      stateRoot: setup.stateRoot,
      workspace: setup.workspace,
      startDir: setup.startDir,
      ...(setup.addDirs.length > 0 ? { addDirs: setup.addDirs } : {}),
      userConfigDir: userConfigDir(),
      observer: request.observer,
      teamObserver: teamEventsFor({ observer: request.observer, teamObserver: withPanes(request.teamObserver, panes) }, opened.id, setup.settings.store),
      asker: request.asker,
      ...(request.hostHooks ? { hostHooks: request.hostHooks } : {}),
      version: VERSION,
      onPermissionDenied: request.onPermissionDenied,
      sandbox: setup.sandbox,
      onBudgetExhausted: request.onBudgetExhausted,
      ...(request.tracing ? { tracing: request.tracing } : {}),
      hosting: { runsTeammates: !setup.settings.remoteTeammates },
    });
    built = true;
    // What `agent drain` takes when its own command line gives no permission flags.
    if (flagsWritten) await flagsWritten;
    else writeRunFlags(dir, opened.id, setup.runFlags, store.marker);
    // The first prompt is recorded while its model request goes out, and is on
    // disk before the runtime lets the session go (its failure fails the run).
    let recording: Promise<void> | undefined;
    let recordFailure: unknown;
    try {
      const accepted = (prompt: string) => {
        if (meta.firstPrompt !== undefined) return;
        const { updated, written } = store.touchOffLoop(meta, prompt);
        meta = updated;
        recording = written.catch((error: unknown) => {
          recordFailure = error;
        });
      };
      const result = await body(lead, { meta, dir, accepted });
      await recording;
      if (recordFailure !== undefined) throw recordFailure;
      return result;
    } finally {
      await recording;
      request.onClosing?.();
      // The panes go before the runtime: their followers would only print that it ended.
      await panes?.close();
      await lead.close();
    }
  } finally {
    // A session discarded below is removed once its flags' write is over.
    await flagsWritten?.catch(() => {});
    // Unlisted while the lock is still held, so no other runtime takes it meanwhile.
    if (!built && setup.session.kind === "new") {
      // The flags written while the runtime was being built are no use of the session.
      if (flagsWritten) removeRunFlags(dir);
      discard = store.unlistIfUnused(opened);
    }
    await shared?.release().catch(() => {});
    await lock.release();
    if (discard) store.removeUnlisted(opened);
  }
}

/** With --teammate-panes tmux (or config) inside tmux: the panes teammates get; outside tmux the setup warned already. */
function teammatePanes(request: RuntimeRequest, sessionId: string): TmuxPanes | undefined {
  const { setup } = request;
  if (setup.settings.terminal.teammatePanes !== "tmux" || !TmuxPanes.available(process.env)) return undefined;
  return new TmuxPanes({
    sessionId,
    stateRoot: setup.stateRoot,
    workspace: setup.workspace,
    store: setup.settings.store,
    env: process.env,
    warn: (message) => request.observer?.({ type: "warning", agent: LEAD, message }),
  });
}

function withPanes(observer: ((event: TeamEvent) => void) | undefined, panes: TmuxPanes | undefined): ((event: TeamEvent) => void) | undefined {
  if (!panes) return observer;
  return (event) => {
    observer?.(event);
    panes.observe(event);
  };
}

async function acquireSessionLock(dir: string, meta: SessionMeta, waitMs: number, onLost: (error: Error) => void): Promise<RuntimeLock> {
  try {
    return await RuntimeLock.acquire(dir, { waitMs, onLost });
  } catch (error) {
    if (!(error instanceof StateDirBusyError)) throw error;
    // Say which session is busy, and how to run beside it.
    throw new StateDirBusyError(dir, error.owner, busyFix(meta));
  }
}

function busyFix(meta: SessionMeta): string {
  return `session ${meta.id}${meta.name === undefined ? "" : ` (${meta.name})`} is already running; wait for it (--wait-lock), or start a new session (\`agent run\` without --continue/--resume/--session)`;
}
