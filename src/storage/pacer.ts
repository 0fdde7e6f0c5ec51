/**
 * Gives the event loop a turn every `every` steps of a long synchronous pass (a
 * deep directory read under a lock), so timers — the lock's refresh among them —
 * still run and the lock never looks abandoned while held.
 */
export class Pacer {
  #steps = 0;
  constructor(private readonly every = 500) {}

  async step(): Promise<void> {
    this.#steps += 1;
    if (this.#steps % this.every === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
