/**
 * The one place secrets are taken out of text that leaves the process: tool
 * results (what the model sees), histories and other state files, stdout and
 * stderr (text, JSON, stream-json, errors), and the environment of commands the
 * agent runs. The composition root registers the configured API key; values of
 * `Authorization` headers and bearer tokens are masked wherever they appear.
 */

export const REDACTED = "[REDACTED]";

/** Shorter values are too likely to occur by chance to be masked everywhere (and are no real key). */
const MIN_SECRET_LENGTH = 8;

// `Authorization: Bearer x`, `"authorization":"Basic x"`, `authorization=x`, and a bare `Bearer x`.
// A value never starts with `{` or `[`: `"headers.Authorization":{…}` is a JSON key, not a credential.
const AUTHORIZATION = /(\b(?:proxy-)?authorization\b["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token)\s+)?[^\s"',;}{[][^\s"',;}]*/gi;
const BEARER = /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;
// The password of a URL with credentials (`postgres://user:secret@host/db`), however short.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)[^\s/?#@]+@/gi;

/** Masked in text: long enough not to occur by chance. */
const secrets = new Set<string>();
/** Every registered value, however short: kept out of the environment of commands (src/security/env-policy.ts). */
const allSecrets = new Set<string>();

/**
 * Masks `value` from now on, wherever redaction applies, and keeps it out of
 * commands' environments. A value shorter than 8 characters is only kept out
 * of environments: masking it in text would cut up ordinary words.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined) return;
  const trimmed = value.trim();
  if (trimmed === "") return;
  allSecrets.add(trimmed);
  if (trimmed.length >= MIN_SECRET_LENGTH) secrets.add(trimmed);
}

/** Every registered secret, short ones included. */
export function registeredSecrets(): readonly string[] {
  return [...allSecrets];
}

/** The secrets masked in text (8 characters or more). */
export function maskedSecrets(): readonly string[] {
  return [...secrets];
}

/** The length of the longest masked secret: how much of a stream may still be the start of one. */
export function longestSecretLength(): number {
  let longest = 0;
  for (const secret of secrets) longest = Math.max(longest, secret.length);
  return longest;
}

/** For tests: forget every registered secret. */
export function clearSecrets(): void {
  secrets.clear();
  allSecrets.clear();
}

/** The text with every registered secret and every Authorization value masked. */
export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  if (/authorization|bearer/i.test(out)) {
    out = out.replace(AUTHORIZATION, `$1${REDACTED}`).replace(BEARER, `$1${REDACTED}`);
  }
  if (out.includes("://")) out = out.replace(URL_PASSWORD, `$1${REDACTED}@`);
  return out;
}

/** A JSON-like value with every string in it redacted (keys included); other values unchanged. */
export function redactValue<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactValue(item)) as T;
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[redact(key)] = redactValue(item);
    return out as T;
  }
  return value;
}
