import type { ManualClock } from "../../src/core/clock.ts";
import type { CronTimer } from "../../src/cron/cron-timer.ts";

interface Sleeper {
  until: number;
  wake: () => void;
}

/**
 * A CronTimer on a ManualClock: sleeps end only when the test advances the
 * clock past them (or their signal aborts), so no test waits for real time.
 * `settled()` resolves once the loop is asleep again, i.e. done with its round.
 */
export class ManualTimer implements CronTimer {
  readonly #sleepers = new Set<Sleeper>();
  #settledWaiters: (() => void)[] = [];
  /** How long each sleep asked for, in order: what the loop planned. */
  readonly requested: number[] = [];

  constructor(readonly clock: ManualClock) {}

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    this.requested.push(ms);
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        until: this.clock.now().getTime() + ms,
        wake: () => {
          this.#sleepers.delete(sleeper);
          signal.removeEventListener("abort", sleeper.wake);
          resolve();
        },
      };
      if (signal.aborted) return sleeper.wake();
      // Through the event loop, so a loop that keeps asking for no wait spins
      // visibly (a test timeout) instead of starving every timer in the process.
      if (ms <= 0) return void setTimeout(sleeper.wake, 0);
      this.#sleepers.add(sleeper);
      signal.addEventListener("abort", sleeper.wake, { once: true });
      for (const waiter of this.#settledWaiters.splice(0)) waiter();
    });
  }

  /** Resolves when someone is asleep (now, or at their next sleep). */
  settled(): Promise<void> {
    if (this.#sleepers.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.#settledWaiters.push(resolve));
  }

  /** Moves the clock, wakes the sleepers it passed, and resolves when the loop sleeps again. */
  async advance(ms: number): Promise<void> {
    await this.settled();
    this.clock.advance(ms);
    const due = [...this.#sleepers].filter((sleeper) => sleeper.until <= this.clock.now().getTime());
    for (const sleeper of due) sleeper.wake();
    if (due.length > 0) await this.settled();
  }
}
