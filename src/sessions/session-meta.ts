import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "../core/errors.ts";
import { MessageId, UtcInstant } from "../core/message.ts";
import { writeFileAtomic } from "../storage/atomic-file.ts";
import { readStateFile } from "../storage/state-file.ts";

/** What `agent sessions list` shows of a first prompt, and all a session file keeps of it. */
export const FIRST_PROMPT_MAX_CHARS = 200;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const SessionName = z.string().regex(NAME, "must be 1-64 letters, digits, dots, underscores or hyphens");

/** `<root>/sessions/<id>/session.json`: who the session is; everything else in the directory is its state. */
export const SessionMeta = z.strictObject({
  version: z.literal(1),
  /** A UUIDv7, so ids sort by creation. */
  id: MessageId,
  name: SessionName.optional(),
  createdAtUtc: UtcInstant,
  /** When a runtime last took the session. */
  lastUsedAtUtc: UtcInstant,
  /** The first prompt, clipped: what the list shows to tell sessions apart. */
  firstPrompt: z.string().max(FIRST_PROMPT_MAX_CHARS).optional(),
});
export type SessionMeta = z.infer<typeof SessionMeta>;

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

export function readSessionMeta(dir: string): SessionMeta | undefined {
  return readStateFile(join(dir, SESSION_FILE), SessionMeta);
}

export function writeSessionMeta(dir: string, meta: SessionMeta): void {
  writeFileAtomic(join(dir, SESSION_FILE), `${JSON.stringify(SessionMeta.parse(meta), null, 2)}\n`);
}

/** The prompt as the session file keeps it: whole if short, else cut with an ellipsis. */
export function clipFirstPrompt(prompt: string): string {
  const text = prompt.trim();
  return text.length <= FIRST_PROMPT_MAX_CHARS ? text : `${text.slice(0, FIRST_PROMPT_MAX_CHARS - 1)}…`;
}
