/** How the cron loop waits; injected so tests move time by hand instead of sleeping. */
export interface CronTimer {
  /** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realTimer: CronTimer = {
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
    }),
};
