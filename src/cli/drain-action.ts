import { statSync } from "node:fs";
import type { CommandContext } from "citty";
import { UsageError } from "../core/errors.ts";
import { runUntilQuiet } from "../app/until-quiet.ts";
import type { SessionMeta } from "../sessions/session-meta.ts";
import { pendingWorkIn } from "../sessions/session-status.ts";
import { type RunFlags, noRunFlags, readRunFlags } from "../sessions/run-flags.ts";
import type { StoreSelection } from "../store/store-url.ts";
import { openSessionViews } from "./store/session-stores.ts";
import { SessionStore } from "../sessions/session-store.ts";
import type { drainArgs } from "./drain.ts";
import { writeErr } from "./output.ts";
import { type RecordedSplit, describeFlags, permissionFlags, splitRecordedFlags } from "./drain-flags.ts";
import { resolveProjectTrust } from "../trust/project-trust.ts";
import { type HeadlessSetup, headlessSetup, withRecordedFlags } from "./run/runtime-args.ts";
import { runHeadless } from "./run/headless.ts";

/** `agent drain`: each chosen session's team restored and run until quiet. */
export async function drainAction({ args, rawArgs }: CommandContext<typeof drainArgs>): Promise<void> {
  if (args.session !== undefined && args.all === true) throw new UsageError("--session and --all both choose what to drain; give one");
  // Flags, workspace and settings checked first; the session is chosen below.
  const setup = headlessSetup(args, rawArgs, () => ({ kind: "new" }));
  const store = new SessionStore(setup.stateRoot);
  const targets = await drainTargets(store, setup.settings.store, args.session, args.all === true);
  if (targets.length === 0) {
    // Foreign sessions are not looked into; said, so a user after an upgrade knows where their work went.
    const foreign = store.list().length;
    const line =
      foreign === 0
        ? `no session in ${setup.stateRoot} has pending work`
        : `no session of yours in ${setup.stateRoot} has pending work (${foreign} foreign session(s) not looked into: \`agent sessions list\`, \`agent sessions adopt ID\`)`;
    if (setup.level !== "quiet") await writeErr(`agent: nothing to do: ${line}\n`);
    return;
  }
  // --all: every session gets its turn even when one fails; the first failure decides the exit code.
  let failure: { error: unknown } | undefined;
  for (const meta of targets) {
    try {
      const session = { kind: "existing", meta } as const;
      // The interrupted run's permissions, unless this command line gives its own,
      // and its added directories in any case (drain has no --add-dir): its
      // teammates go on as they were allowed to start, where they could reach.
      // Never looser than this line and the config: a widening is named, not taken.
      const { taken, widening } = recordedFlagsFor(readRunFlags(store.dirOf(meta.id), meta.id, store.marker), setup);
      if (!noRunFlags(widening)) {
        const flags = permissionFlags(widening).join(" ");
        await writeErr(
          `agent: warning: session ${meta.id}: its last run was given ${flags}, wider than this command line and your config allow; not taken: pass ${flags} to agent drain to drain with them\n`,
        );
      }
      if (noRunFlags(taken)) {
        await drainSession({ ...setup, session });
      } else {
        assertAddDirsExist(meta.id, taken.addDirs);
        const line = withRecordedFlags(args, rawArgs, taken);
        const own = headlessSetup(line.args, line.rawArgs, () => session);
        if (own.level !== "quiet") await writeErr(`agent: session ${meta.id}: draining with its last run's ${describeFlags(taken)}\n`);
        await drainSession(own);
      }
    } catch (error) {
      // Told now when it is not the one the exit code reports.
      if (failure) await writeErr(`agent: session ${meta.id}: ${error instanceof Error ? error.message : String(error)}\n`);
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/**
 * What of the record drain takes: when its own line gives no permission flag,
 * what of it is no looser than that line and the config (and the added
 * directories), the rest named as widening; else the added directories alone.
 * The Lead's recorded mode unless its own line gives one: a delegate Lead stays
 * one (the mode only narrows what the Lead may do).
 */
function recordedFlagsFor(recorded: RunFlags | undefined, setup: HeadlessSetup): RecordedSplit {
  if (recorded === undefined) return { taken: {}, widening: {} };
  const { leadMode: ownMode, ...ownPermissions } = setup.runFlags;
  const { leadMode, ...permissions } = recorded;
  const mode: RunFlags = ownMode === undefined && leadMode !== undefined ? { leadMode } : {};
  if (!noRunFlags(ownPermissions)) return { taken: { ...(recorded.addDirs !== undefined ? { addDirs: recorded.addDirs } : {}), ...mode }, widening: {} };
  const { settings } = setup;
  const trusted = resolveProjectTrust({ workspace: setup.workspace }).trusted;
  const split = splitRecordedFlags(permissions, {
    permissionMode: settings.permissionMode,
    ...(settings.sandbox.mode !== undefined ? { sandbox: settings.sandbox.mode } : {}),
    allow: settings.permissions.allow,
    trusted,
  });
  return { taken: { ...split.taken, ...mode }, widening: split.widening };
}

/** A directory the run added and that is gone since: drain stops rather than run the team without it. */
function assertAddDirsExist(sessionId: string, dirs: readonly string[] | undefined): void {
  for (const dir of dirs ?? []) {
    if (!isDirectory(dir)) {
      throw new UsageError(`session ${sessionId} was run with --add-dir ${dir}, which is no longer a directory; recreate it, then run agent drain again`);
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The sessions to drain: the one named; with --all every session with pending
 * work (a running one is refused, exit 4, by its lock); else the most recently
 * used session with pending work, or, when none has any, the most recently used
 * one (which then reports that there is nothing to do). Only this user's own
 * sessions: a foreign one is refused when named and passed over otherwise.
 */
async function drainTargets(store: SessionStore, selection: StoreSelection, ref: string | undefined, all: boolean): Promise<SessionMeta[]> {
  if (ref !== undefined) return [store.requireOwn(store.find(ref))];
  const sessions = store.own();
  if (sessions.length === 0) return [];
  // Pending work is where the runs keep it: the session's files, or the PostgreSQL store's rows.
  const views = await openSessionViews(selection);
  try {
    const pending: SessionMeta[] = [];
    for (const meta of sessions) {
      if ((await pendingWorkIn(views.of({ dir: store.dirOf(meta.id), id: meta.id }))) === undefined) continue;
      if (!all) return [meta];
      pending.push(meta);
    }
    if (all) return pending;
    return sessions.slice(0, 1);
  } finally {
    await views.close();
  }
}

async function drainSession(setup: HeadlessSetup): Promise<void> {
  // Building the runtime does what a stopped one left: the teammates are
  // restored (their interrupted work back to ready/, the ones with work
  // started) and the Lead's waiting messages fed to its inbox. An event already
  // in the Lead's history (the last process died before its ack) is acked
  // without being appended again, and answered only if it never was.
  await runHeadless(setup, {
    async body(lead, stop) {
      return { quiet: await runUntilQuiet(lead, stop.signal), teammates: lead.team.list() };
    },
    note(_done, outcome, info) {
      if (outcome.result.isError || outcome.eventTurns > 0) return undefined;
      return outcome.events === 0
        ? `nothing to do: no messages wait for the Lead in ${info.stateDir} and no teammate has work`
        : `acknowledged ${outcome.events} event(s) the Lead had already answered; nothing else to do`;
    },
  });
}
