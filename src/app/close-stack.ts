/**
 * What a runtime built, to be closed newest first. A closer that throws is kept
 * (in its place) so a second `close()` retries exactly what is left; the stack
 * counts as closed only after a pass in which nothing failed. One error is
 * rethrown as is, several as an AggregateError.
 */
export class CloseStack {
  #closers: (() => void | Promise<void>)[] = [];
  #closing: Promise<void> | undefined;

  push(close: () => void | Promise<void>): void {
    this.#closers.push(close);
  }

  /** Whether everything pushed has closed cleanly. */
  get closed(): boolean {
    return this.#closers.length === 0;
  }

  close(): Promise<void> {
    // Concurrent calls share one pass: two passes at once would run each closer twice.
    this.#closing ??= this.#pass().finally(() => {
      this.#closing = undefined;
    });
    return this.#closing;
  }

  async #pass(): Promise<void> {
    const pending = this.#closers.splice(0);
    const failed: (() => void | Promise<void>)[] = [];
    const errors: unknown[] = [];
    for (const close of [...pending].reverse()) {
      try {
        await close();
      } catch (error) {
        failed.unshift(close);
        errors.push(error);
      }
    }
    // Closers pushed while this pass ran are newer than the failed ones.
    this.#closers.unshift(...failed);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "closing the runtime failed in several places");
  }
}
