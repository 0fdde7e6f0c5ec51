import { availableParallelism, loadavg } from "node:os";

/**
 * Deadlines for tests. A test waits for an event, never for a time; the
 * deadline only bounds how long it waits before calling the event missing. On
 * a loaded machine (CI's 2 cores running the suite beside other work) the same
 * event comes later, so every deadline is scaled: by TEST_TIME_SCALE when set,
 * else by the run-queue length per core at the moment the wait starts (at
 * least 1, at most MAX_SCALE). A slow machine waits longer instead of failing.
 */
const MAX_SCALE = 12;

export function timeScale(): number {
  const given = Number(process.env.TEST_TIME_SCALE);
  if (Number.isFinite(given) && given > 0) return given;
  const perCore = (loadavg()[0] ?? 0) / Math.max(1, availableParallelism());
  return Math.min(MAX_SCALE, Math.max(1, perCore));
}

/** `ms` as a deadline on this machine now. */
export function deadline(ms: number): number {
  return Math.round(ms * timeScale());
}

export class WaitTimedOut extends Error {}

/**
 * Resolves with `check`'s first truthy value, polled every few milliseconds;
 * throws WaitTimedOut naming `what` (with what it shows then) once the scaled
 * deadline has passed without it.
 */
export async function waitUntil<T>(check: () => T | Promise<T>, what: string | (() => string), ms = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + deadline(ms);
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new WaitTimedOut(`timed out after ${deadline(ms)} ms waiting for ${typeof what === "string" ? what : what()}`);
    await Bun.sleep(5);
  }
}

/** A promise that settles within the scaled deadline, or WaitTimedOut naming `what`. */
export async function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = deadline(ms);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WaitTimedOut(`timed out after ${limit} ms waiting for ${what}`)), limit);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
