/**
 * Gives the event loop a turn every `every` steps of a long synchronous pass (a
 * deep directory read under a lock), so timers — the lock's refresh among them —
 * still run and the lock never looks abandoned while held.
 */
export class Pacer {
  #steps = 0;
  constructor(private readonly every = 500) {}

  /**
   * `step` for a loop of many cheap steps: a promise to await on the steps that
   * yield, undefined on the others — so 50 000 steps make 100 awaits, not 50 000.
   */
  next(): Promise<void> | undefined {
    this.#steps += 1;
    return this.#steps % this.every === 0 ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined;
  }

  async step(): Promise<void> {
    this.#steps += 1;
    if (this.#steps % this.every === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
