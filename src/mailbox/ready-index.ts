import { timeOfId } from "../core/ids.ts";
import { compareFifo } from "../core/message-format.ts";
import { TIME_WIDTH } from "./mailbox-index.ts";

export interface IndexedEntry {
  /** The file name in ready/. */
  readonly name: string;
  readonly id: string;
  readonly createdAtUtc: string;
}

/**
 * An entry known from its file name alone: a time-keyed id names its message's
 * `createdAtUtc` (see timeKeyedId), worked out only when a comparison needs it.
 */
class NamedEntry implements IndexedEntry {
  #createdAtUtc: string | undefined;
  constructor(
    readonly name: string,
    readonly id: string,
  ) {}
  get createdAtUtc(): string {
    this.#createdAtUtc ??= timeOfId(this.id)!;
    return this.#createdAtUtc;
  }
}

/**
 * An entry whose time came from the mailbox's index, for a file named `<id>.json`.
 * The id and the time are cut out only when asked for, and not kept: a first
 * claim makes 50 000 entries, and the strings kept cost more in fresh memory
 * than cutting them again when a comparison needs them.
 */
export class RecordEntry implements IndexedEntry {
  constructor(
    readonly name: string,
    /** The times of the records matched with this one's, side by side (see matchRecords). */
    private readonly times: string,
    private readonly at: number,
  ) {}
  get id(): string {
    return this.name.slice(0, 36);
  }
  get createdAtUtc(): string {
    return this.times.slice(this.at, this.at + TIME_WIDTH);
  }
}

/**
 * Whether `entry`'s key came from its time-keyed name. A file that passed the
 * strict check under that name has that very key (the check requires a time-keyed
 * id's createdAtUtc to be the instant it names), so it need not be compared again.
 */
export function keyedByName(entry: IndexedEntry): boolean {
  return entry instanceof NamedEntry;
}

/** The index entry of a ready/ file whose name is a time-keyed message id; undefined for any other name. */
export function entryFromName(name: string): IndexedEntry | undefined {
  return isKeyedName(name) ? new NamedEntry(name, name.slice(0, 36)) : undefined;
}

/** Whether `name` is `<time-keyed canonical id>.json`; the mark is tested first, without a string made (most names fail there). */
export function isKeyedName(name: string): boolean {
  return (
    name.length === 41 &&
    name.charCodeAt(14) === 56 /* 8 */ &&
    name.charCodeAt(15) === 49 /* 1 */ &&
    name.charCodeAt(16) === 102 /* f */ &&
    name.charCodeAt(17) === 48 /* 0 */ &&
    CANONICAL_KEYED_NAME.test(name)
  );
}

const CANONICAL_KEYED_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-81f0-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json$/;

/**
 * An agent's ready/ queue held in FIFO order `(createdAtUtc, id)`, so a claim does
 * not read every file again. Keys come from the file name when it is a time-keyed
 * id, else from the message's own fields, read once when the file is first seen;
 * the head is re-read and re-checked at claim time either way.
 *
 * `stamp` records the ready/ state this index matches; the store compares it with
 * the current one before trusting the index.
 */
export class ReadyIndex {
  #entries: IndexedEntry[] = [];
  /** Name → entry, built only once something needs it: a first claim does not. */
  #byName: Map<string, IndexedEntry> | undefined;
  stamp: bigint | undefined;

  get size(): number {
    return this.#entries.length;
  }

  names(): IterableIterator<string> {
    return this.#map().keys();
  }

  has(name: string): boolean {
    return this.#map().has(name);
  }

  head(): IndexedEntry | undefined {
    return this.#entries[0];
  }

  /** The entries in FIFO order, as they are now (a copy: the caller may change the index while it walks them). */
  inOrder(): IndexedEntry[] {
    return [...this.#entries];
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
    this.#byName?.set(entry.name, entry);
  }

  /**
   * Adds entries not in the index yet, at once: `sortedKeyed` already in FIFO
   * order (time-keyed names in name order are), `others` in any order unless
   * `othersInOrder` says they are in FIFO order too. Sorted once and merged, instead of one splice each — quadratic for a directory
   * listed in no particular order.
   */
  insertMany(sortedKeyed: IndexedEntry[], others: IndexedEntry[], othersInOrder = false): void {
    const sortedOthers = othersInOrder ? others : sortedFifo(others);
    const added = others.length === 0 ? sortedKeyed : sortedKeyed.length === 0 ? sortedOthers : merge(sortedKeyed, sortedOthers);
    this.#entries = this.#entries.length === 0 ? added : merge(this.#entries, added);
    if (this.#byName) for (const entry of added) this.#byName.set(entry.name, entry);
  }

  remove(name: string): void {
    const first = this.#entries[0];
    if (first?.name === name) {
      this.#entries.shift();
      this.#byName?.delete(name);
      return;
    }
    const map = this.#map();
    const entry = map.get(name);
    if (!entry) return;
    map.delete(name);
    const at = this.#entries.indexOf(entry);
    if (at >= 0) this.#entries.splice(at, 1);
  }

  #map(): Map<string, IndexedEntry> {
    if (!this.#byName) {
      this.#byName = new Map();
      for (const entry of this.#entries) this.#byName.set(entry.name, entry);
    }
    return this.#byName;
  }
}

/**
 * `entries` in FIFO order, by one native sort of strings instead of a comparator
 * called from the sort: at 50 000 entries (a fresh process's first claim over ids
 * that carry no time) the comparator cost three times the directory listing. The
 * key is `createdAtUtc` (fixed width), the id, a NUL (below every character, so an
 * id sorts before any longer one it begins), then the entry's position. Entries
 * already in order (as the index usually gives them) are checked, not sorted.
 */
function sortedFifo(entries: IndexedEntry[]): IndexedEntry[] {
  if (inFifoOrder(entries)) return entries;
  const keys = entries.map((entry, at) => `${entry.createdAtUtc}${entry.id}\0${at}`);
  keys.sort();
  return keys.map((key) => entries[Number(key.slice(key.lastIndexOf("\0") + 1))]!);
}

function inFifoOrder(entries: readonly IndexedEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) if (compareFifo(entries[i - 1]!, entries[i]!) > 0) return false;
  return true;
}

function merge(a: IndexedEntry[], b: IndexedEntry[]): IndexedEntry[] {
  const out: IndexedEntry[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = compareFifo(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
