import type { RuntimeEvent } from "../core/runtime-event.ts";

/** Who acknowledges an event once it is safely in the history (the mailbox moves it to done/, cron records the run). */
export interface EventOwner {
  acknowledge(event: RuntimeEvent): Promise<void>;
}

export interface InboxEntry {
  event: RuntimeEvent;
  owner: EventOwner;
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

  take(): InboxEntry | undefined {
    return this.#entries.shift();
  }

  /** Resolves at the next publish (at once when something is queued), or when `signal` aborts. */
  waitForEvent(signal?: AbortSignal): Promise<void> {
    if (this.#entries.length > 0 || signal?.aborted) return Promise.resolve();
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
