import { compareFifo } from "../core/message.ts";

export interface IndexedEntry {
  /** The file name in ready/. */
  name: string;
  id: string;
  createdAtUtc: string;
}

/**
 * An agent's ready/ queue held in FIFO order `(createdAtUtc, id)`, so a claim does
 * not read every file again. Keys come from the messages' own fields, read once
 * when a file is first seen; the head is re-read and re-checked at claim time.
 *
 * `stamp` records the ready/ state this index matches; the store compares it with
 * the current one before trusting the index.
 */
export class ReadyIndex {
  #entries: IndexedEntry[] = [];
  #byName = new Map<string, IndexedEntry>();
  stamp: bigint | undefined;

  get size(): number {
    return this.#entries.length;
  }

  names(): IterableIterator<string> {
    return this.#byName.keys();
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  head(): IndexedEntry | undefined {
    return this.#entries[0];
  }

  insert(entry: IndexedEntry): void {
    this.remove(entry.name);
    // Time-ordered ids make new entries land at the end: search from there.
    let low = 0;
    let high = this.#entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareFifo(this.#entries[mid]!, entry) <= 0) low = mid + 1;
      else high = mid;
    }
    this.#entries.splice(low, 0, entry);
    this.#byName.set(entry.name, entry);
  }

  remove(name: string): void {
    const entry = this.#byName.get(name);
    if (!entry) return;
    this.#byName.delete(name);
    const first = this.#entries[0];
    if (first === entry) {
      this.#entries.shift();
      return;
    }
    const at = this.#entries.indexOf(entry);
    if (at >= 0) this.#entries.splice(at, 1);
  }
}
