import { expect } from "bun:test";
import type { z } from "zod";

/** A hand-written check's verdict on one value, in a shape all the checks map to. */
export type Verdict = { ok: true; value: unknown } | { ok: false };

/**
 * Asserts that `check` and `schema` agree on `value`: both accept it (with equal
 * output, the same key order and the same frozenness) or both refuse it.
 */
export function expectAgreement(schema: z.ZodType, check: (value: unknown) => Verdict, value: unknown, label: string): void {
  const zod = schema.safeParse(value);
  const mine = check(value);
  if (zod.success !== mine.ok) {
    throw new Error(
      `${label}: zod ${zod.success ? "accepts" : `refuses (${zod.error.issues.map((i) => i.message).join("; ")})`}, ` +
        `the hand-written check ${mine.ok ? "accepts" : "refuses"}: ${safeJson(value)}`,
    );
  }
  if (zod.success && mine.ok) {
    expect(mine.value).toEqual(zod.data);
    expect(Object.keys(mine.value as object)).toEqual(Object.keys(zod.data as object));
    expect(Object.isFrozen(mine.value)).toBe(Object.isFrozen(zod.data));
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A small seeded PRNG (xorshift32), so a failing fuzz case can be replayed. */
export function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** Values of every JSON kind, and near misses of the formats the files use. */
export const ODD_VALUES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53,
  "",
  " ",
  "x",
  [],
  {},
  ["a"],
  "ALICE",
  "con",
  "a-",
  "a".repeat(41),
  "00000000-0000-4000-8000-000000000001",
  "00000000-0000-4000-8000-00000000000G",
  "00000000-0000-4000-8000-00000000000A",
  "0000000-0000-4000-8000-000000000001",
  "2026-03-01T12:00:00.000Z",
  "2024-02-29T00:00:00.000Z",
  "2025-02-29T00:00:00.000Z",
  "2026-03-01T24:00:00.000Z",
  "2026-03-01T12:00:00Z",
  "2026-03-01T12:00:00.000+00:00",
  "2026-03-01 12:00:00.000Z",
  "2026-04-31T12:00:00.000Z",
  "2000-02-29T23:59:59.999Z",
  "1900-02-29T00:00:00.000Z",
  "12345",
  "12a",
];

/**
 * Runs `expectAgreement` over `valid` and its mutations: each field replaced by
 * each odd value (and by the other examples' values), removed, an unknown key
 * added, the whole value replaced by odd values, and `fuzzRounds` random
 * multi-field mutations. Returns how many of the cases zod accepted, so a test
 * can see it exercised both verdicts.
 */
export function expectAgreementOver(
  schema: z.ZodType,
  check: (value: unknown) => Verdict,
  valid: Record<string, unknown>[],
  options: { extraValues?: unknown[]; fuzzRounds?: number; seed?: number } = {},
): { accepted: number; refused: number } {
  const counts = { accepted: 0, refused: 0 };
  for (const [value, label] of casesOver(valid, options)) {
    expectAgreement(schema, check, value, label);
    if (schema.safeParse(value).success) counts.accepted += 1;
    else counts.refused += 1;
  }
  return counts;
}

/**
 * The cases expectAgreementOver runs, with a label each: odd whole values, then
 * `valid` and its mutations (each field replaced by each odd value and by the
 * other examples' values, removed, an unknown key added, an inherited key) and
 * `fuzzRounds` random multi-field mutations.
 */
export function* casesOver(
  valid: Record<string, unknown>[],
  options: { extraValues?: unknown[]; fuzzRounds?: number; seed?: number } = {},
): Generator<[unknown, string]> {
  const pool = [...ODD_VALUES, ...(options.extraValues ?? []), ...valid.flatMap((v) => Object.values(v))];
  const keys = [...new Set(valid.flatMap((v) => Object.keys(v)))];
  for (const value of ODD_VALUES) yield [value, "whole value"];
  for (const [n, base] of valid.entries()) {
    yield [base, `valid #${n}`];
    yield [{ ...base, extra: 1 }, `valid #${n} + unknown key`];
    yield [{ ...base, __proto__: { inherited: 1 } }, `valid #${n} with a prototype`];
    for (const key of keys) {
      const { [key]: _removed, ...without } = base;
      yield [without, `valid #${n} without ${key}`];
      for (const value of pool) yield [{ ...base, [key]: value }, `valid #${n} with ${key}=${JSON.stringify(value)}`];
    }
  }
  const random = seeded(options.seed ?? 14);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  for (let round = 0; round < (options.fuzzRounds ?? 1_000); round++) {
    const value: Record<string, unknown> = { ...pick(valid) };
    const changes = 1 + Math.floor(random() * 3);
    for (let c = 0; c < changes; c++) {
      const key = pick(keys);
      if (random() < 0.2) delete value[key];
      else value[key] = pick(pool);
    }
    yield [value, `fuzz round ${round}`];
  }
}
