/**
 * The team's writes to team.json, run one after another: a later state never
 * lands before an earlier one. Each write computes what it stores when it runs
 * (not when it was queued), so the last one to land is always the latest.
 */
export class RegistryWrites {
  #tail: Promise<void> = Promise.resolve();

  /** Queues `write` behind every earlier one; its own failure rejects only its caller. */
  chain(write: () => Promise<void>): Promise<void> {
    const written = this.#tail.then(write);
    this.#tail = written.catch(() => {});
    return written;
  }
}
