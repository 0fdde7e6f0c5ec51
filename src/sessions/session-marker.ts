import { linkSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { userConfigDir } from "../config/locations.ts";
import { ensureDir, isErrno, unlinkQuietly, writeNewFileSynced } from "../storage/atomic-file.ts";
import { SessionKeyError } from "./session-errors.ts";

/** The user's session key, in their config directory: never in a workspace, so no repository can carry it. */
export const SESSION_KEY_FILE = "session-key";

const KEY = /^[0-9a-f]{64}$/;

/**
 * The one place that decides whether a session is this user's own (SPEC §8
 * "State only this user wrote"): every session this user creates carries an
 * HMAC-SHA256 of its id under a random key kept in the user's config dir. A
 * session without a valid marker (committed to a repository, copied from
 * another user, or made before markers) is foreign: drain, resume, continue
 * and the pending-work reports skip it until `agent sessions adopt`.
 *
 * The marker covers the id only, not the path: a state root the user moves
 * (or names with --state-dir from elsewhere) keeps its sessions.
 */
export class SessionMarker {
  #key: string | undefined;

  constructor(readonly keyPath: string) {}

  /** The marker of the user whose config dir `env` and `home` name. */
  static forUser(env: Record<string, string | undefined> = process.env, home?: string): SessionMarker {
    return new SessionMarker(join(userConfigDir(env, home), SESSION_KEY_FILE));
  }

  /** The marker a session this user creates (or adopts) carries; the key is made on first use. */
  sign(sessionId: string): string {
    return hmac(this.#keyForSigning(), sessionId);
  }

  /** True when the session carries this user's marker. Creates nothing: without a key no session is the user's. */
  owns(meta: { id: string; marker?: string }): boolean {
    if (meta.marker === undefined) return false;
    const key = this.#existingKey();
    // Not a secret compared against attacker-chosen input in a loop: a local
    // file's marker is checked once per command, so plain equality is enough.
    return key !== undefined && meta.marker === hmac(key, meta.id);
  }

  #existingKey(): string | undefined {
    if (this.#key !== undefined) return this.#key;
    let text: string;
    try {
      text = readFileSync(this.keyPath, "utf8").trim();
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
    if (!KEY.test(text)) throw new SessionKeyError(this.keyPath);
    this.#key = text;
    return text;
  }

  #keyForSigning(): string {
    const existing = this.#existingKey();
    if (existing !== undefined) return existing;
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const key = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    const dir = join(this.keyPath, "..");
    ensureDir(dir);
    // Written whole under a temp name, then linked into place: link fails if a
    // concurrent first run made its key a moment ago, and then that key is the
    // one (a half-written key file is never visible).
    const temp = join(dir, `.${SESSION_KEY_FILE}.${process.pid}.${Date.now()}`);
    writeNewFileSynced(temp, `${key}\n`);
    try {
      linkSync(temp, this.keyPath);
      this.#key = key;
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    } finally {
      unlinkQuietly(temp);
    }
    return this.#key ?? (this.#existingKey() as string);
  }
}

function hmac(key: string, sessionId: string): string {
  // Bun's hasher, not node:crypto: that builtin is slow to load on every start (docs/development.md).
  const hasher = new Bun.CryptoHasher("sha256", key);
  hasher.update(`agent-session-marker:v1:${sessionId}`);
  return hasher.digest("hex");
}
