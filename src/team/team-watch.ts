import type { AgentName } from "../core/agent-name.ts";
import type { TeamRegistry, TeammateRecord } from "./team-registry.ts";
import type { TeammateHosting } from "./teammate-hosting.ts";

/** What the watch needs of a team runtime (TeammateRuntime). */
export interface TeamWatchTarget {
  readonly role: "lead" | "worker";
  readonly needsWatch: boolean;
  sync(stored: TeammateRecord[]): void;
  unheld(): AgentName[];
  adopt(name: AgentName): Promise<boolean>;
  pokeHeld(): void;
  refreshElsewhere(): Promise<boolean>;
  pumpLead(): Promise<void>;
}

export interface TeamWatchOptions {
  registry: TeamRegistry;
  hosting: TeammateHosting;
  everyMs: number;
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
  while (!signal.aborted) {
    if (team.role === "lead" && !team.needsWatch) return;
    try {
      await lookOnce(team, options, signal);
    } catch (error) {
      if (signal.aborted) return;
      options.onError?.(error);
    }
    await pause(options.everyMs, signal);
  }
}

async function lookOnce(team: TeamWatchTarget, { registry, hosting }: TeamWatchOptions, signal: AbortSignal): Promise<void> {
  team.sync(await registry.read());
  if (hosting.runsTeammates) {
    for (const name of team.unheld()) {
      if (signal.aborted || !hosting.hasRoom()) break;
      // A worker takes one teammate per look, so workers started together share the team.
      if ((await team.adopt(name)) && team.role === "worker") break;
    }
  }
  team.pokeHeld();
  if (team.role === "lead") {
    await team.refreshElsewhere();
    await team.pumpLead();
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
