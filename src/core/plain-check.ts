/**
 * A few hand-written checks for JSON read from disk, for the code that must not
 * load zod: the reading commands (`mailbox show`, `mailbox list`) and the mailbox's
 * claim path, where loading and running zod cost more than the work itself
 * (bench/startup.ts, bench/mailbox.ts). Each validator built from these is exactly
 * as strict as the zod schema beside it, and a test runs both over the same valid
 * and invalid inputs. Problems are worded like zod's, joined like describeIssues.
 */

import type { z } from "zod";

/** One line summarising what is wrong with a value zod refused, for errors and quarantine reasons. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

/** A hand-written check's verdict: the value (a fresh object) or one line of problems. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** What zod's object schemas accept as an object. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Collects problems as `path: message`, the form describeIssues prints. */
export class Problems {
  // Made at the first problem: a valid message (every claim reads one) makes none.
  #list: string[] | undefined;

  add(path: string, message: string): void {
    (this.#list ??= []).push(path.length > 0 ? `${path}: ${message}` : message);
  }

  get empty(): boolean {
    return this.#list === undefined;
  }

  toString(): string {
    return this.#list?.join("; ") ?? "";
  }

  /** A strict object: every key must be one of `known`. */
  unknownKeys(value: Record<string, unknown>, known: ReadonlySet<string>): void {
    // for-in, as zod does: an inherited enumerable key counts too.
    const extra: string[] = [];
    for (const key in value) if (!known.has(key)) extra.push(key);
    if (extra.length > 0) {
      this.add("", `Unrecognized key${extra.length > 1 ? "s" : ""}: ${extra.map((key) => JSON.stringify(key)).join(", ")}`);
    }
  }

  /** A string field; returns it when it is one. */
  string(value: Record<string, unknown>, key: string): string | undefined {
    const field = value[key];
    if (typeof field === "string") return field;
    this.add(key, `Invalid input: expected string, received ${typeName(field)}`);
    return undefined;
  }

  /** A positive safe integer field (zod's `z.number().int().positive()`). */
  positiveInt(value: Record<string, unknown>, key: string): number | undefined {
    const field = value[key];
    if (typeof field !== "number" || !Number.isFinite(field)) {
      this.add(key, `Invalid input: expected number, received ${typeName(field)}`);
      return undefined;
    }
    if (!Number.isSafeInteger(field)) {
      this.add(key, "Invalid input: expected int, received number");
      return undefined;
    }
    if (field <= 0) {
      this.add(key, "Too small: expected number to be >0");
      return undefined;
    }
    return field;
  }

  /** An optional field: absent or undefined passes, anything else must pass `check`. */
  optional<T>(value: Record<string, unknown>, key: string, check: (value: Record<string, unknown>, key: string) => T): T | undefined {
    return value[key] === undefined ? undefined : check(value, key);
  }

  /** A string field matching `pattern`, else `message`. */
  matching(value: Record<string, unknown>, key: string, pattern: RegExp, message: string): string | undefined {
    const field = this.string(value, key);
    if (field === undefined) return undefined;
    if (pattern.test(field)) return field;
    this.add(key, message);
    return undefined;
  }
}

/**
 * True when `value`'s keys are `keys`, in that order (the order zod's output
 * has: a strict object is rebuilt in its schema's order), but for those of
 * `optional` it lacks, and none is set to undefined: a strict object a fast
 * check may take as it is (anything else goes to the schema).
 */
export function hasExactly(value: Record<string, unknown>, keys: readonly string[], optional: readonly string[] = []): boolean {
  let next = 0;
  // for-in, as zod does: an inherited enumerable key counts too.
  for (const key in value) {
    if (value[key] === undefined) return false;
    while (next < keys.length && keys[next] !== key) {
      if (!optional.includes(keys[next]!)) return false;
      next += 1;
    }
    if (next === keys.length) return false;
    next += 1;
  }
  for (; next < keys.length; next += 1) if (!optional.includes(keys[next]!)) return false;
  return true;
}

/** A safe integer of 0 or more (zod's `z.number().int().nonnegative()`). */
export function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** A string of at least one UTF-16 unit (zod's `z.string().min(1)`). */
export function isFilled(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

/**
 * A strict object's own fields, copied in `keys` order: present when the input has
 * the key (even as undefined), as zod's object output is.
 */
export function pick<T>(value: Record<string, unknown>, keys: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in value) out[key] = value[key];
  return out as T;
}

/** zod's name for a value's type in "expected X, received Y". */
function typeName(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isNaN(value) ? "NaN" : "number";
  return typeof value;
}

/**
 * A UTC instant in the one form `toISOString()` produces (zod's
 * `z.iso.datetime({ offset: false, local: false, precision: 3 })`): a real
 * calendar date (leap years included), `T`, a time with milliseconds, `Z`.
 */
export const UTC_INSTANT =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}(?:Z))$/;

export function isUtcInstant(value: string): boolean {
  return UTC_INSTANT.test(value);
}

export const INVALID_UTC_INSTANT = "Invalid ISO datetime";
