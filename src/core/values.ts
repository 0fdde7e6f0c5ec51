import { ConfigError, UsageError } from "./errors.ts";

// Parsers of flag and environment text shared by the configuration and the model factory
// (which re-checks the base URL for callers that skip the CLI): pure, so they sit in core.

/**
 * Where a text value came from: a flag (`--max-turns`) or an environment variable
 * (`AGENT_MAX_TURNS`). Errors name it and say how to fix it in that place.
 */
export type ValueSource = { flag: string } | { env: string } | { file: string };

export function invalidValue(source: ValueSource, value: string, expected: string): Error {
  if ("flag" in source) return new UsageError(`invalid value ${JSON.stringify(value)} for ${source.flag}: expected ${expected}`);
  if ("file" in source) return new ConfigError(`config file ${source.file}: invalid value ${JSON.stringify(value)} for store: expected ${expected}; fix it or remove it`);
  return new ConfigError(`invalid ${source.env}=${JSON.stringify(value)} in the environment: expected ${expected}; fix or unset it`);
}

export function parsePositiveInt(value: string, source: ValueSource): number {
  // Digits only: Number("1e3"), Number(" 7") and Number("0x10") would all pass otherwise.
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw invalidValue(source, value, "a whole number greater than 0, e.g. 20");
  return n;
}

/** A budget in US dollars (`2.50`): decimal digits only, greater than 0. */
export function parseBudget(value: string, source: ValueSource): number {
  const usd = /^[0-9]+(\.[0-9]+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(usd) || usd <= 0) throw invalidValue(source, value, "an amount of US dollars greater than 0, e.g. 2.50");
  return usd;
}

export function parseBaseUrl(value: string, source: ValueSource): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw invalidValue(source, value, "an http(s) URL of an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1");
  }
  return value;
}

export function parseNonEmpty(value: string, source: ValueSource): string {
  if (value.trim().length === 0) throw invalidValue(source, value, "a non-empty value");
  return value;
}
