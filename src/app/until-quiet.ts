import type { RuntimeEvent } from "../core/runtime-event.ts";
import type { LeadRuntime } from "./lead.ts";
import type { RunResult } from "../runtime/run-types.ts";

/**
 * While teammates or background jobs are still at work, an event turn waits
 * for more events before it calls the model, so results that finish together
 * are answered in one model turn instead of one after another: until no event
 * came for BATCH_WINDOW_MS, and never longer than BATCH_MAX_WAIT_MS from its
 * first event. It stops waiting at once when nothing is at work any more.
 */
export const BATCH_WINDOW_MS = 150;
export const BATCH_MAX_WAIT_MS = 1_000;

export interface QuietOutcome {
  /** Events that reached the Lead's history and were acknowledged. */
  events: number;
  /**
   * The Lead's event turns, in order: each answers the `events` of one batch (a
   * turn resumed after a crash has no event objects).
   */
  turns: { event?: RuntimeEvent; events?: RuntimeEvent[]; key: string; result: RunResult }[];
  /** True when `signal` ended the wait before the team was quiet. */
  interrupted: boolean;
}

/**
 * Runs the Lead's event turns as messages arrive until the team is quiet: no
 * teammate working, nothing queued for the Lead, nothing waiting in its mailbox.
 * Wakes on the next event or teammate state change, never on a fixed delay.
 */
export async function runUntilQuiet(lead: LeadRuntime, signal?: AbortSignal): Promise<QuietOutcome> {
  const outcome: QuietOutcome = { events: 0, turns: [], interrupted: false };
  // Turns a killed process left half done come first: their events are already
  // acknowledged, so nothing else would bring them back.
  outcome.turns.push(...(await lead.runner.resumeAbandoned(signal)));
  // Teammates at work and background jobs running are pending work; future
  // cron runs are not (a daily job would keep the wait open for ever).
  const busy = () => lead.team.hasPendingWork() || lead.background.hasRunning();
  for (;;) {
    if (signal?.aborted) {
      outcome.interrupted = true;
      return outcome;
    }
    // Idle notices alone do not wake the Lead while others still work: they
    // join the next result's turn, or get one once the team is quiet.
    if (lead.inbox.holdsOnly("idle") && busy()) {
      await Promise.race([lead.inbox.nextPublish(signal), lead.team.nextChange(signal)]);
      continue;
    }
    // Quiet: nothing at work, nobody deciding whether an idle notice follows its result, nothing more waiting.
    const quiet = () => !busy() && !lead.team.finishing() && lead.inbox.size === 0;
    const round = await lead.runner.runEvents(lead.inbox, { signal, settle: (batch) => settle(lead, batch, signal), quiet });
    outcome.events += round.processed;
    outcome.turns.push(...round.turns);
    if (round.ackFailed) {
      // The event is back in the inbox; give the store a moment before retrying.
      await Bun.sleep(50);
      continue;
    }
    if (lead.inbox.size > 0) continue;
    // A teammate whose idle notice went out with its result is not at work, but
    // the run is not over before its ack: the claim after it may find more.
    if (!busy()) await lead.team.acked();
    if (!busy()) {
      // Teammates other processes run (`agent worker`): their work is looked at
      // first, then the Lead's mailbox, so a result sent before that look is seen.
      await lead.team.refreshElsewhere();
      // Messages another process (e.g. `agent mailbox send`) put in the Lead's mailbox.
      await lead.team.pumpLead();
      if (lead.inbox.size === 0 && !busy()) return outcome;
      continue;
    }
    await Promise.race([lead.inbox.waitForEvent(signal), lead.team.nextChange(signal)]);
  }
}

/**
 * Whether more events may join a batch: waits (within the window, see
 * BATCH_WINDOW_MS) for the next event or the next teammate state change while
 * work is going on; with nothing at work, only looks in the Lead's mailbox.
 */
async function settle(lead: LeadRuntime, batch: { startedAt: number; lastEventAt: number }, signal?: AbortSignal): Promise<boolean> {
  const busy = lead.team.hasPendingWork() || lead.background.hasRunning();
  // A teammate whose result came and whose idle notice may follow (its hook, its store calls) is waited for, up to the cap.
  const until = lead.team.finishing() ? batch.startedAt + BATCH_MAX_WAIT_MS : Math.min(batch.lastEventAt + BATCH_WINDOW_MS, batch.startedAt + BATCH_MAX_WAIT_MS);
  const left = until - performance.now();
  if (!busy || left <= 0) {
    await lead.team.pumpLead();
    return lead.inbox.size > 0;
  }
  await waitForCompany(lead, left, signal);
  return true;
}

/**
 * The interactive session's batches wait for no company, but for a teammate
 * that sent a result and is deciding what follows (up to BATCH_MAX_WAIT_MS):
 * its idle notice joins the turn that answers its result.
 */
export async function settleFinishing(lead: Pick<LeadRuntime, "team" | "inbox">, batch: { startedAt: number }, signal?: AbortSignal): Promise<boolean> {
  const left = batch.startedAt + BATCH_MAX_WAIT_MS - performance.now();
  if (!lead.team.finishing() || left <= 0) return lead.inbox.size > 0;
  await waitForCompany(lead, left, signal);
  return true;
}

/** Until the next event, the next teammate state change, `left` ms, or `signal`. */
async function waitForCompany(lead: Pick<LeadRuntime, "team" | "inbox">, left: number, signal?: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const stopOnAbort = () => stop.abort();
  signal?.addEventListener("abort", stopOnAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      lead.inbox.waitForEvent(stop.signal),
      lead.team.nextChange(stop.signal),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stopOnAbort);
    stop.abort();
  }
}
