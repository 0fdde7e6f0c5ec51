import type { AgentName } from "../core/agent-name.ts";
import type { TeamRegistry, TeammateRecord } from "./team-registry.ts";
import type { TeammateHosting } from "./teammate-hosting.ts";

/** What the watch needs of a team runtime (TeammateRuntime). */
export interface TeamWatchTarget {
  readonly role: "lead" | "worker";
  readonly needsWatch: boolean;
  /** Taken before a read of the store, handed to sync with what it read. */
  changeMark(): number;
  sync(stored: TeammateRecord[], mark: number): void;
  unheld(): AgentName[];
  adopt(name: AgentName): Promise<boolean>;
  pokeHeld(): void;
  refreshElsewhere(): Promise<boolean>;
  pumpLead(): Promise<void>;
}

/**
 * Tells a process that its team may have changed in another one: a teammate
 * stored or removed, a lease given up, mail for one of the session's agents.
 * A hint, like a mail wake-up: the watch looks, and a look that finds nothing
 * new is harmless; what is never notified (a lease that ran out) is found by
 * the slow poll under it.
 */
export interface TeamWakeups {
  /** `wake` is told the agent whose mailbox gained a message, or nothing for any other change. */
  watch(wake: (agent?: string) => void): Promise<{ stop(): void }>;
}

export interface TeamWatchOptions {
  registry: TeamRegistry;
  hosting: TeammateHosting;
  /** How often it looks with no wake-ups (or when subscribing to them failed). */
  everyMs: number;
  /** With these, it looks when woken, and every `everyMs` of theirs regardless (a safety net). */
  wakeups?: { source: TeamWakeups; everyMs: number };
  /** Told when one look failed (the store unreachable); the next look tries again. */
  onError?: (error: unknown) => void;
}

/**
 * Looks after what other processes change, every `everyMs` until `signal`
 * aborts (or, in a Lead's runtime, until no teammate runs elsewhere): new
 * teammates (a worker learns spawns), teammates whose lease is free (a new
 * spawn, or a holder killed with -9: taken over from their history), messages
 * other processes sent to the teammates held here, whether the teammates run
 * elsewhere have work, and (for a Lead) results waiting in its mailbox.
 */
export async function watchTeam(team: TeamWatchTarget, options: TeamWatchOptions, signal: AbortSignal): Promise<void> {
  let woken = false;
  let wakeNow: (() => void) | undefined;
  let subscription: { stop(): void } | undefined;
  try {
    subscription = await options.wakeups?.source.watch(() => {
      woken = true;
      wakeNow?.();
    });
  } catch (error) {
    // Polled instead, as without wake-ups.
    options.onError?.(error);
  }
  const everyMs = subscription && options.wakeups ? options.wakeups.everyMs : options.everyMs;
  try {
    while (!signal.aborted) {
      if (team.role === "lead" && !team.needsWatch) return;
      woken = false;
      let took = false;
      try {
        took = await lookOnce(team, options, signal);
      } catch (error) {
        if (signal.aborted) return;
        options.onError?.(error);
      }
      if (took) {
        // The next look comes `options.everyMs` later whatever is notified meanwhile: a
        // process that took a teammate leaves the others to workers woken with it (they
        // share the team, as one teammate per look meant), yet takes the next one soon.
        await pause(options.everyMs, signal, () => {});
        continue;
      }
      // A change notified while it looked may not have been seen: look again.
      if (woken) continue;
      await pause(everyMs, signal, (wake) => {
        wakeNow = wake;
      });
      wakeNow = undefined;
    }
  } finally {
    subscription?.stop();
  }
}

/** One look; whether it took a teammate over. */
async function lookOnce(team: TeamWatchTarget, { registry, hosting }: TeamWatchOptions, signal: AbortSignal): Promise<boolean> {
  const mark = team.changeMark();
  team.sync(await registry.read(), mark);
  let took = false;
  if (hosting.runsTeammates) {
    for (const name of team.unheld()) {
      if (signal.aborted || !hosting.hasRoom()) break;
      if (!(await team.adopt(name))) continue;
      took = true;
      // A worker takes one teammate per look, so workers started together share the team.
      if (team.role === "worker") break;
    }
  }
  team.pokeHeld();
  if (team.role === "lead") {
    await team.refreshElsewhere();
    await team.pumpLead();
  }
  return took;
}

/** Waits `ms`, or until aborted, or until the function handed to `onWake` is called. */
export function pause(ms: number, signal: AbortSignal, onWake: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    onWake(done);
  });
}
