import { afterEach } from "bun:test";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { CronRuntime } from "../../src/cron/cron-runtime.ts";
import { FileCronStore } from "../../src/cron/cron-store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { ManualTimer } from "../support/manual-timer.ts";
import { tempDir } from "../support/temp-dir.ts";

export const START = "2026-01-01T00:00:00.000Z";
export const MINUTE = 60_000;

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/**
 * One runtime's cron on `stateDir` (a fresh one by default), wired as the
 * composition root does: its own inbox and supervisor, a manual clock and timer,
 * cron fields read in UTC. A second world on the same dir is a restart.
 */
export function cronWorld(stateDir = join(tempDir("agent-cron-"), "state"), clock = new ManualClock(START)) {
  const inbox = new EventInbox();
  const failures: string[] = [];
  const supervisor = new JobSupervisor((name, error) => failures.push(`${name}: ${(error as Error).message}`));
  const timer = new ManualTimer(clock);
  const store = new FileCronStore(stateDir);
  const cron = new CronRuntime({
    inbox,
    supervisor,
    store,
    clock,
    ids: uuidV7Source,
    timer,
    timeZone: "UTC",
    onError: (error) => failures.push((error as Error).message),
  });
  // Newest first, as the composition root does: cron, then the supervisor.
  const close = async () => {
    await cron.close();
    await supervisor.close();
  };
  open.push(close);
  return { stateDir, clock, timer, inbox, supervisor, store, cron, failures, close };
}

export const request = (cron: string, recurring: boolean, durable = true, prompt = "check the build") => ({
  cron,
  prompt,
  recurring,
  durable,
});
