export interface IdSource {
  /** A fresh canonical lowercase UUID. */
  next(): string;
}

/**
 * Time-ordered UUIDv7 ids: name order then agrees with FIFO order in the usual
 * case, which keeps a deep queue cheap to order. They are still canonical UUIDs.
 */
export const uuidV7Source: IdSource = { next: () => Bun.randomUUIDv7() };

/** Deterministic ids `00000000-0000-4000-8000-<n>` for tests. */
export class SequentialIds implements IdSource {
  #n = 0;
  constructor(private readonly prefix = "00000000-0000-4000-8000") {}
  next(): string {
    this.#n += 1;
    return `${this.prefix}-${this.#n.toString(16).padStart(12, "0")}`;
  }
}
