import type { RuntimeEvent } from "../core/runtime-event.ts";

/** Who acknowledges an event once it is safely in the history (the mailbox moves it to done/, cron records the run). */
export interface EventOwner {
  acknowledge(event: RuntimeEvent): Promise<void>;
  /** Gives back an event that was never processed (the mailbox moves it back to ready/). */
  release?(event: RuntimeEvent): Promise<void>;
}

export interface InboxEntry {
  event: RuntimeEvent;
  owner: EventOwner;
}

/**
 * Where a turn in progress looks, between its steps, for words that should
 * reach it now rather than after it (a teammate's mailbox: the Lead's or the
 * user's messages). Each entry taken is claimed: it must be acknowledged or
 * released through its owner.
 */
export interface MidTurnSource {
  /** The next entry waiting, claimed; undefined when none. */
  take(): Promise<InboxEntry | undefined>;
}

/**
 * The one FIFO of runtime events an agent's event turns are fed from, shared by
 * the mailbox, cron and background jobs. An event already queued is not queued
 * twice.
 */
export class EventInbox {
  readonly #entries: InboxEntry[] = [];
  #waiters: (() => void)[] = [];

  get size(): number {
    return this.#entries.length;
  }

  publish(entry: InboxEntry): void {
    if (this.#entries.some((queued) => queued.event.eventId === entry.event.eventId)) return;
    this.#entries.push(entry);
    this.#wake();
  }

  /** Puts an entry whose acknowledgement failed back at the front, to be retried first. */
  republish(entry: InboxEntry): void {
    if (this.#entries.some((queued) => queued.event.eventId === entry.event.eventId)) return;
    this.#entries.unshift(entry);
    this.#wake();
  }

  /** Whether every queued event (at least one) is `kind`: e.g. only idle notices wait. */
  holdsOnly(kind: string): boolean {
    return this.#entries.length > 0 && this.#entries.every((entry) => entry.event.kind === kind);
  }

  take(): InboxEntry | undefined {
    return this.#entries.shift();
  }

  /** Takes the first queued entry whose event `accept` accepts, leaving the others in their order. */
  takeWhere(accept: (event: RuntimeEvent) => boolean): InboxEntry | undefined {
    const at = this.#entries.findIndex((entry) => accept(entry.event));
    return at < 0 ? undefined : this.#entries.splice(at, 1)[0];
  }

  /**
   * Hands every queued event back to its owner, at close: a message claimed for
   * the Lead but never processed goes back to ready/, so `mailbox list` shows it
   * waiting and the next runtime delivers it. Every entry is tried; one error is
   * rethrown as is, several as an AggregateError.
   */
  async releaseAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const entry of this.#entries.splice(0)) {
      try {
        await entry.owner.release?.(entry.event);
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `releasing ${errors.length} queued events failed`);
  }

  /** Resolves at the next publish (at once when something is queued), or when `signal` aborts. */
  waitForEvent(signal?: AbortSignal): Promise<void> {
    if (this.#entries.length > 0) return Promise.resolve();
    return this.nextPublish(signal);
  }

  /** Resolves at the next publish, whatever is queued already, or when `signal` aborts. */
  nextPublish(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
        resolve();
      };
      this.#waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
}
