import { join } from "node:path";
import { UsageError } from "../core/errors.ts";
import { CANONICAL_UUID, NOT_A_MESSAGE_ID } from "../core/message-format.ts";
import { type Checked, INVALID_UTC_INSTANT, Problems, UTC_INSTANT, isPlainRecord, pick } from "../core/plain-check.ts";
import { writeFileAtomic, writeFileAtomicOffLoop } from "../storage/atomic-file.ts";
import { redact } from "../security/redact.ts";
import { readStateFile } from "../storage/state-file.ts";

/** What `agent sessions list` shows of a first prompt, and all a session file keeps of it. */
export const FIRST_PROMPT_MAX_CHARS = 200;

export const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const NOT_A_SESSION_NAME = "must be 1-64 letters, digits, dots, underscores or hyphens";
const NAME = SESSION_NAME;
/** A session marker: an HMAC-SHA256 in hex (session-marker.ts). */
export const SESSION_MARKER = /^[0-9a-f]{64}$/;
export const NOT_A_SESSION_MARKER = "must be 64 lowercase hex digits";

/** `<root>/sessions/<id>/session.json`: who the session is; everything else in the directory is its state. */
export interface SessionMeta {
  version: 1;
  /** A UUIDv7, so ids sort by creation. */
  id: string;
  name?: string;
  createdAtUtc: string;
  /** When a runtime last took the session. */
  lastUsedAtUtc: string;
  /** The first prompt, clipped: what the list shows to tell sessions apart. */
  firstPrompt?: string;
  /** This user's mark on the session (session-marker.ts); absent or wrong: the session is foreign. */
  marker?: string;
}

const META_FIELDS = ["version", "id", "name", "createdAtUtc", "lastUsedAtUtc", "firstPrompt", "marker"] as const;

/**
 * A session file's content, checked by hand: every admin command reads every
 * session file to find its session, and zod would be most of its start-up. The
 * same rules as a zod schema are in session-meta-schema.ts, held to agree by a test.
 */
export function checkSessionMeta(value: unknown): Checked<SessionMeta> {
  if (!isPlainRecord(value)) return { ok: false, problem: "Invalid input: expected object" };
  const problems = new Problems();
  problems.unknownKeys(value, new Set(META_FIELDS));
  if (value.version !== 1) problems.add("version", "Invalid input: expected 1");
  problems.matching(value, "id", CANONICAL_UUID, NOT_A_MESSAGE_ID);
  problems.optional(value, "name", (v, k) => problems.matching(v, k, SESSION_NAME, NOT_A_SESSION_NAME));
  problems.matching(value, "createdAtUtc", UTC_INSTANT, INVALID_UTC_INSTANT);
  problems.matching(value, "lastUsedAtUtc", UTC_INSTANT, INVALID_UTC_INSTANT);
  const prompt = problems.optional(value, "firstPrompt", (v, k) => problems.string(v, k));
  if (prompt !== undefined && prompt.length > FIRST_PROMPT_MAX_CHARS) {
    problems.add("firstPrompt", `Too big: expected string to have <=${FIRST_PROMPT_MAX_CHARS} characters`);
  }
  problems.optional(value, "marker", (v, k) => problems.matching(v, k, SESSION_MARKER, NOT_A_SESSION_MARKER));
  if (!problems.empty) return { ok: false, problem: problems.toString() };
  return { ok: true, value: pick<SessionMeta>(value, META_FIELDS) };
}

export const SESSION_FILE = "session.json";

/** The name as given, or a usage error saying what a name may hold. */
export function assertSessionName(name: string): string {
  if (!NAME.test(name)) {
    throw new UsageError(
      `invalid session name ${JSON.stringify(name)}: use 1-64 letters, digits, dots, underscores or hyphens, starting with a letter or digit (e.g. ci-42)`,
    );
  }
  return name;
}

/** Far above what a session file holds (its first prompt is clipped): `sessions list` never reads a planted giant. */
const SESSION_FILE_MAX_BYTES = 1024 * 1024;

export function readSessionMeta(dir: string): SessionMeta | undefined {
  return readStateFile(join(dir, SESSION_FILE), checkSessionMeta, SESSION_FILE_MAX_BYTES);
}

export function writeSessionMeta(dir: string, meta: SessionMeta): void {
  writeFileAtomic(join(dir, SESSION_FILE), sessionMetaText(meta));
}

/** writeSessionMeta with its fsyncs off the event loop: the file is replaced once they are done. */
export function writeSessionMetaOffLoop(dir: string, meta: SessionMeta): Promise<void> {
  return writeFileAtomicOffLoop(join(dir, SESSION_FILE), sessionMetaText(meta));
}

function sessionMetaText(meta: SessionMeta): string {
  const checked = checkSessionMeta(meta);
  // Only a bug gets here: every field was checked where it came from.
  if (!checked.ok) throw new Error(`invalid session metadata: ${checked.problem}`);
  return `${JSON.stringify(checked.value, null, 2)}\n`;
}

/** The prompt as the session file keeps it: whole if short, else cut with an ellipsis. */
export function clipFirstPrompt(prompt: string): string {
  // Masked before it is cut: a key at the cut would otherwise survive as a prefix no mask knows.
  const text = redact(prompt).trim();
  return text.length <= FIRST_PROMPT_MAX_CHARS ? text : `${text.slice(0, FIRST_PROMPT_MAX_CHARS - 1)}…`;
}
