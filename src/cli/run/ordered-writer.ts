/**
 * Writes text in call order from a synchronous callback (a RunObserver cannot
 * await), and reports the first failure at `flush()`. After a failure (stdout
 * closed by `| head`) later writes are dropped instead of piling up.
 */
export class OrderedWriter {
  #tail: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;

  constructor(private readonly sink: (text: string) => Promise<void>) {}

  /**
   * Queues `text` for the sink, or for `elsewhere` in the same order: two
   * streams sharing one terminal (stdout and stderr) keep the order in which
   * things were said. A failure of `elsewhere` is its own business: it is not
   * this writer's failure.
   */
  write(text: string, elsewhere?: (text: string) => Promise<void>): void {
    if (elsewhere) {
      this.#tail = this.#tail.then(() => elsewhere(text).catch(() => {}));
      return;
    }
    this.#tail = this.#tail.then(async () => {
      if (this.#failure) return;
      try {
        await this.sink(text);
      } catch (error) {
        this.#failure = { error };
      }
    });
  }

  /** Resolves once everything written so far is out; throws the first write failure. */
  async flush(): Promise<void> {
    await this.#tail;
    if (this.#failure) throw this.#failure.error;
  }
}
