/** What `agent config show` prints instead of a secret: the mark every other redaction uses. */
import { REDACTED } from "../security/redact.ts";

export { REDACTED };

// Headers that carry credentials (Authorization, Azure's api-key, x-api-key,
// cookies, tokens): refused in the project's file, redacted when shown.
const SECRET_HEADER = /authorization|api[-_]?key|token|secret|cookie|password/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name);
}

/** The headers with every credential's value replaced by REDACTED. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, isSecretHeader(name) ? REDACTED : value]));
}
