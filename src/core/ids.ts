export interface IdSource {
  /** A fresh canonical lowercase UUID. */
  next(): string;
  /**
   * A fresh id for a message created at `at`, carrying that instant in its name
   * (see timeKeyedId); absent for sources whose ids carry no time.
   */
  nextAt?(at: Date): string;
}

/**
 * The mark of a time-keyed id: a UUID of version 8 (RFC 9562's custom layout)
 * whose third group is exactly this. Everything else is a "foreign" id.
 */
const TIME_KEY_MARK = "81f0";
const MAX_KEYED_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z: toISOString stays 4-digit

/**
 * An id that names its message's creation instant: the first 48 bits are the
 * milliseconds since the epoch of `createdAtUtc` (as in UUIDv7), then version 8
 * and the mark `81f0`, then the variant and 62 random bits:
 *
 *     0190b8a6-7c1e-81f0-9f00-3b2a1c4d5e6f
 *     └─ ms ──────┘ └mark┘ └─ random ──────┘
 *
 * The message schema requires `createdAtUtc` to equal that instant, so a queue can
 * be put in FIFO order `(createdAtUtc, id)` from file names alone; name order is
 * that order. Undefined when `at` cannot be encoded (before 1970, after 9999).
 */
export function timeKeyedId(at: Date): string | undefined {
  const ms = at.getTime();
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_KEYED_MS) return undefined;
  const time = ms.toString(16).padStart(12, "0");
  const random = crypto.getRandomValues(new Uint8Array(8));
  random[0] = (random[0]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = Buffer.from(random).toString("hex");
  return `${time.slice(0, 8)}-${time.slice(8)}-${TIME_KEY_MARK}-${hex.slice(0, 4)}-${hex.slice(4)}`;
}

/** Whether `id` (a canonical UUID) is time-keyed. */
export function isTimeKeyedId(id: string): boolean {
  return id.length === 36 && id.charCodeAt(14) === 56 /* "8" */ && id.slice(14, 18) === TIME_KEY_MARK;
}

/** The `createdAtUtc` a time-keyed id names, or undefined for a foreign id. */
export function timeOfId(id: string): string | undefined {
  if (!isTimeKeyedId(id)) return undefined;
  const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return ms <= MAX_KEYED_MS ? new Date(ms).toISOString() : undefined;
}

/**
 * Time-ordered ids. `next()` gives UUIDv7s (ids that are not message ids: keys,
 * task ids); `nextAt()` gives time-keyed message ids, so name order agrees with
 * FIFO order and a fresh process can order a deep queue without reading it.
 */
export const uuidV7Source: IdSource = {
  next: () => Bun.randomUUIDv7(),
  nextAt: (at) => timeKeyedId(at) ?? Bun.randomUUIDv7(),
};

/** Deterministic ids `00000000-0000-4000-8000-<n>` for tests. */
export class SequentialIds implements IdSource {
  #n = 0;
  constructor(private readonly prefix = "00000000-0000-4000-8000") {}
  next(): string {
    this.#n += 1;
    return `${this.prefix}-${this.#n.toString(16).padStart(12, "0")}`;
  }
}
