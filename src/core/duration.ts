import { UsageError } from "./errors.ts";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** Parses durations like `90s`, `15m`, `12h`, `7d`, `1h30m` into milliseconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const part = /(\d+)(ms|s|m|h|d|w)/y;
  let total = 0;
  let index = 0;
  while (index < trimmed.length) {
    part.lastIndex = index;
    const match = part.exec(trimmed);
    if (!match) break;
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    index = part.lastIndex;
  }
  if (trimmed.length === 0 || index !== trimmed.length) {
    throw new UsageError(
      `invalid duration ${JSON.stringify(text)}: use a number with a unit (ms, s, m, h, d, w), e.g. 30s, 12h, 7d or 1h30m`,
    );
  }
  return total;
}
