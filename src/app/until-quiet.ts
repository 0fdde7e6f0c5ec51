import type { RuntimeEvent } from "../core/runtime-event.ts";
import type { LeadRuntime } from "./lead.ts";
import type { RunResult } from "../runtime/run-types.ts";

export interface QuietOutcome {
  /** Events that reached the Lead's history and were acknowledged. */
  events: number;
  /** The Lead's event turns, in order (a turn resumed after a crash has no event object). */
  turns: { event?: RuntimeEvent; key: string; result: RunResult }[];
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
  for (;;) {
    if (signal?.aborted) {
      outcome.interrupted = true;
      return outcome;
    }
    const round = await lead.runner.runEvents(lead.inbox, { signal });
    outcome.events += round.processed;
    outcome.turns.push(...round.turns.map((turn) => ({ ...turn, key: turn.event.eventId })));
    if (round.ackFailed) {
      // The event is back in the inbox; give the store a moment before retrying.
      await Bun.sleep(50);
      continue;
    }
    if (lead.inbox.size > 0) continue;
    // Teammates at work and background jobs running are pending work; future
    // cron runs are not (a daily job would keep the wait open for ever).
    const busy = () => lead.team.hasPendingWork() || lead.background.hasRunning();
    if (!busy()) {
      // Messages another process (e.g. `agent mailbox send`) put in the Lead's mailbox.
      await lead.team.pumpLead();
      if (lead.inbox.size === 0 && !busy()) return outcome;
      continue;
    }
    await Promise.race([lead.inbox.waitForEvent(signal), lead.team.nextChange(signal)]);
  }
}
