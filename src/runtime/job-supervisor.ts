export interface JobHandle {
  /** Settles when the job has ended (never rejects: failures go to onError). */
  done: Promise<void>;
  /** Aborts the job's signal and waits for it to end. */
  cancel(): Promise<void>;
}

/**
 * The one owner of every background promise of a runtime (teammate workers,
 * cron, background shell jobs): nothing runs unowned, a failure is reported
 * instead of lost, and close() cancels and awaits everything.
 */
export class JobSupervisor {
  readonly #jobs = new Map<number, { name: string; controller: AbortController; promise: Promise<void> }>();
  #next = 0;
  #closed = false;
  #idleWaiters: (() => void)[] = [];

  constructor(private readonly onError: (name: string, error: unknown) => void = () => {}) {}

  get running(): number {
    return this.#jobs.size;
  }

  /** Starts `job` under this supervisor; it gets a signal that aborts on cancel() or close(). */
  start(name: string, job: (signal: AbortSignal) => Promise<void>): JobHandle {
    if (this.#closed) throw new Error(`job supervisor is closed; cannot start ${name}`);
    const id = this.#next++;
    const controller = new AbortController();
    const promise = (async () => {
      try {
        await job(controller.signal);
      } catch (error) {
        if (!controller.signal.aborted) this.onError(name, error);
      } finally {
        this.#jobs.delete(id);
        if (this.#jobs.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
      }
    })();
    this.#jobs.set(id, { name, controller, promise });
    return {
      done: promise,
      cancel: async () => {
        controller.abort();
        await promise;
      },
    };
  }

  /** Resolves when no job runs. */
  idle(): Promise<void> {
    if (this.#jobs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Refuses new jobs, aborts the running ones and waits for them to end. */
  async close(): Promise<void> {
    this.#closed = true;
    const jobs = [...this.#jobs.values()];
    for (const job of jobs) job.controller.abort();
    await Promise.all(jobs.map((job) => job.promise));
  }
}
