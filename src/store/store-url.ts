import { REDACTED, registerSecret } from "../security/redact.ts";

/**
 * Where a session's shared state lives: `files` (the default, under the state
 * dir) or a PostgreSQL database, chosen by `--store`, AGENT_STORE or config `store`.
 */
export type StoreSelection = { kind: "files" } | { kind: "postgres"; url: string };

export const FILES_STORE: StoreSelection = { kind: "files" };

export type StoreUrlProblem = string;

/**
 * The selection a `--store` value names, or what was expected instead (one phrase:
 * the caller names the flag, variable or file it came from). A password in the URL is
 * registered as a secret, so it is masked in everything printed from now on.
 */
export function parseStoreUrl(value: string): StoreSelection | { problem: StoreUrlProblem } {
  const text = value.trim();
  if (text === "files" || text === "file") return FILES_STORE;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "`files` or a URL such as postgres://user@host:5432/db" };
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    return { problem: `\`files\` or postgres://user@host:5432/db (${JSON.stringify(url.protocol.replace(/:$/, ""))} is not a supported store)` };
  }
  if (url.hostname === "" && !url.searchParams.has("host") && !url.searchParams.has("path")) {
    return { problem: "a URL with a host, such as postgres://user@host:5432/db" };
  }
  if (url.password !== "") {
    registerSecret(url.password);
    registerSecret(decodeURIComponent(url.password));
  }
  return { kind: "postgres", url: text };
}

/**
 * The directory of the unix socket the store connects through, when its URL
 * names one (`postgres://%2Fvar%2Frun%2Fpostgresql/db`, `?host=/dir`, `?path=`):
 * the sandbox hides it, so a command cannot talk to the database as the user.
 */
export function storeSocketDir(selection: StoreSelection): string | undefined {
  if (selection.kind !== "postgres") return undefined;
  let url: URL;
  try {
    url = new URL(selection.url.trim());
  } catch {
    return undefined;
  }
  const host = url.searchParams.get("host") ?? decodeURIComponent(url.hostname);
  if (host.startsWith("/")) return host;
  const path = url.searchParams.get("path");
  // Bun.SQL's `path` names the socket file itself.
  if (path?.startsWith("/")) return path.replace(/\/[^/]*$/, "") || "/";
  return undefined;
}

/** The store as it may be shown: a URL's password replaced by the redaction mark. */
export function displayStoreUrl(selection: StoreSelection | string): string {
  const text = typeof selection === "string" ? selection : selection.kind === "files" ? "files" : selection.url;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not a URL, so no password field; but a malformed one may still hold `user:secret@`.
    return text.replace(/:[^\s/?#@:]+@/, `:${REDACTED}@`);
  }
  if (url.password === "") return text;
  url.password = "PASSWORD";
  return url.toString().replace(":PASSWORD@", `:${REDACTED}@`);
}

/** Whether the URL carries a password (refused in the project's committed config file). */
/** A store URL's password as written and decoded (`p%40ss` and `p@ss`); none for `files` or a URL without one. */
export function storeUrlPasswords(value: string): string[] {
  try {
    const { password } = new URL(value.trim());
    if (password === "") return [];
    try {
      return [password, decodeURIComponent(password)];
    } catch {
      return [password];
    }
  } catch {
    return [];
  }
}

export function storeUrlHasPassword(value: string): boolean {
  try {
    return new URL(value.trim()).password !== "";
  } catch {
    return false;
  }
}
