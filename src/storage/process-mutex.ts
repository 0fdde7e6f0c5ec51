/**
 * An async mutex. proper-lockfile refuses a lock the same process already holds
 * (ELOCKED), so every store instance in a process first queues here, keyed by the
 * lock file's path, and only then takes the cross-process lock.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #holders = 0;

  /** Whether some work holds the mutex or waits for it. */
  get busy(): boolean {
    return this.#holders > 0;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    this.#holders += 1;
    const previous = this.#tail;
    let unlock!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      unlock = resolve;
    });
    await previous;
    try {
      return await work();
    } finally {
      this.#holders -= 1;
      unlock();
    }
  }
}

// Process-wide by design: the point is to serialise *all* instances in this
// process that share one lock file, so the registry cannot live in an instance.
const byLockPath = new Map<string, Mutex>();

export function processMutexFor(lockPath: string): Mutex {
  let mutex = byLockPath.get(lockPath);
  if (!mutex) {
    mutex = new Mutex();
    byLockPath.set(lockPath, mutex);
  }
  return mutex;
}
