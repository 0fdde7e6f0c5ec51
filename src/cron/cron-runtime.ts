import type { Clock } from "../core/clock.ts";
import { UsageError } from "../core/errors.ts";
import type { IdSource } from "../core/ids.ts";
import type { RuntimeEvent } from "../core/runtime-event.ts";
import type { EventInbox, EventOwner } from "../runtime/event-inbox.ts";
import type { JobHandle, JobSupervisor } from "../runtime/job-supervisor.ts";
import { cronEvent, cronEventId, parseCronEventId } from "./cron-event.ts";
import { localTimeZone, nextCronRun } from "./cron-expression.ts";
import type { CronJob, CronStore } from "./cron-store.ts";
import { type CronTimer, realTimer } from "./cron-timer.ts";

/**
 * The loop looks at the jobs at least this often, so a wall clock that jumped
 * (a suspended laptop) or a job cancelled from another process is noticed.
 */
const MAX_SLEEP_MS = 60_000;

export interface CronRuntimeOptions {
  /** The runtime's one inbox: fired jobs are published here, with this runtime as their owner. */
  inbox: EventInbox;
  /** The runtime's one owner of background work: the scheduling loop runs under it. */
  supervisor: JobSupervisor;
  store: CronStore;
  clock: Clock;
  ids: IdSource;
  timer?: CronTimer;
  /** Zone the cron fields are read in; the machine's by default. */
  timeZone?: string;
  /** Told of a failure of the loop (e.g. a corrupt cron.json), once per distinct message; the loop goes on. */
  onError?: (error: unknown) => void;
}

export interface ScheduleRequest {
  cron: string;
  prompt: string;
  recurring: boolean;
  durable: boolean;
}

/**
 * Fires scheduled jobs as events into the runtime's inbox and records each run
 * when the Lead has it (acknowledge). A job is due when its `nextRunAtUtc` has
 * passed; however many slots were missed while no process ran, it fires once.
 */
export class CronRuntime implements EventOwner {
  readonly #o: CronRuntimeOptions;
  /** Looked up on first need: the system's time zone took 13–14 ms of every start, before the first model request. */
  #zone: string | undefined;
  /** Runs published and not yet acknowledged: not published again meanwhile. */
  readonly #inFlight = new Set<string>();
  #jobs: CronJob[] = [];
  #loop: JobHandle | undefined;
  #wake = new AbortController();
  #closed = false;
  #lastError = "";

  constructor(options: CronRuntimeOptions) {
    this.#o = options;
    this.#zone = options.timeZone;
  }

  get #timeZone(): string {
    this.#zone ??= localTimeZone();
    return this.#zone;
  }

  get inbox(): EventInbox {
    return this.#o.inbox;
  }

  get supervisor(): JobSupervisor {
    return this.#o.supervisor;
  }

  /** Reads the jobs (a corrupt cron.json throws here, at start-up) and starts the loop; due jobs fire at once. */
  async start(): Promise<void> {
    if (this.#closed) throw new UsageError("the cron runtime is closed; it cannot start again");
    if (this.#loop) return;
    this.#jobs = await this.#o.store.list();
    // Two starts at once, or a close while the jobs were read: one loop, or none.
    if (this.#loop || this.#closed) return;
    this.#loop = this.#o.supervisor.start("cron", (signal) => this.#run(signal));
  }

  async schedule(request: ScheduleRequest): Promise<CronJob> {
    if (this.#closed) throw new UsageError("the cron runtime is closed; no new jobs can be scheduled");
    if (request.prompt.trim().length === 0) throw new UsageError("a cron job needs a non-empty prompt: what the Lead should do when it fires");
    const now = this.#o.clock.now();
    const job: CronJob = {
      id: this.#o.ids.next(),
      cron: request.cron.trim(),
      prompt: request.prompt,
      recurring: request.recurring,
      durable: request.durable,
      createdAtUtc: now.toISOString(),
      nextRunAtUtc: nextCronRun(request.cron, now, this.#timeZone).toISOString(),
    };
    await this.#o.store.add(job);
    await this.#refresh();
    return job;
  }

  /** Every job this runtime knows, soonest first. */
  list(): CronJob[] {
    return [...this.#jobs];
  }

  /** When the next run not yet published is due; undefined when no job waits. */
  nextRunAt(): Date | undefined {
    const next = this.#jobs.find((job) => !this.#inFlight.has(cronEventId(job)));
    return next ? new Date(next.nextRunAtUtc) : undefined;
  }

  /** Whether a run not yet published is due within `withinMs` (0: due now). */
  hasDueSoon(withinMs = 0): boolean {
    const next = this.nextRunAt();
    return next !== undefined && next.getTime() <= this.#o.clock.now().getTime() + withinMs;
  }

  /** Publishes every due run not already in flight; returns how many. The loop calls it; tests may too. */
  async runDue(): Promise<number> {
    this.#jobs = await this.#o.store.list();
    const now = this.#o.clock.now().toISOString();
    let published = 0;
    for (const job of this.#jobs) {
      const eventId = cronEventId(job);
      if (job.nextRunAtUtc > now || this.#inFlight.has(eventId)) continue;
      this.#inFlight.add(eventId);
      this.#o.inbox.publish({ event: cronEvent(job), owner: this });
      published += 1;
    }
    return published;
  }

  /**
   * Records the run once the Lead has it: a one-shot job is removed, a recurring
   * one moves to its first slot after now (missed slots are skipped, not queued).
   * A retry, or a job cancelled meanwhile, changes nothing.
   */
  async acknowledge(event: RuntimeEvent): Promise<void> {
    const { jobId, slot } = parseCronEventId(event.eventId);
    const now = this.#o.clock.now();
    await this.#o.store.update(jobId, (job) => {
      if (job.nextRunAtUtc !== slot) return job;
      if (!job.recurring) return null;
      const after = new Date(Math.max(now.getTime(), Date.parse(slot)));
      return { ...job, lastRunAtUtc: now.toISOString(), nextRunAtUtc: nextCronRun(job.cron, after, this.#timeZone).toISOString() };
    });
    this.#inFlight.delete(event.eventId);
    await this.#refresh();
  }

  /** Stops the loop; called by the composition root after the teammates and before the supervisor. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#loop?.cancel();
  }

  async #run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let failed = false;
      try {
        await this.runDue();
        this.#lastError = "";
      } catch (error) {
        failed = true;
        this.#report(error);
      }
      this.#wake = new AbortController();
      const next = this.nextRunAt();
      // After a failure the jobs known may be stale and overdue: wait the full
      // period rather than spin on a file that is still broken.
      const ms = next === undefined || failed ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, next.getTime() - this.#o.clock.now().getTime());
      await (this.#o.timer ?? realTimer).sleep(Math.max(0, ms), AbortSignal.any([signal, this.#wake.signal]));
    }
  }

  /** Re-reads the jobs and wakes the loop, whose next wait may now be shorter. */
  async #refresh(): Promise<void> {
    try {
      this.#jobs = await this.#o.store.list();
    } catch (error) {
      this.#report(error);
    }
    this.#wake.abort();
  }

  #report(error: unknown): void {
    const message = (error as Error).message;
    if (message === this.#lastError) return;
    this.#lastError = message;
    this.#o.onError?.(error);
  }
}
