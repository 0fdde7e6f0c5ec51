import { z } from "zod";
import { MessageId, UtcInstant } from "../core/message.ts";
import { FIRST_PROMPT_MAX_CHARS, NOT_A_SESSION_MARKER, NOT_A_SESSION_NAME, SESSION_MARKER, SESSION_NAME } from "./session-meta.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * `session.json` as a zod schema: the declarative form of checkSessionMeta
 * (session-meta.ts), which is hand-written so that admin commands start without
 * zod; a test holds the two to the same verdicts.
 */
export const SessionMetaSchema = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    id: MessageId,
    name: z.string().regex(SESSION_NAME, NOT_A_SESSION_NAME).optional(),
    createdAtUtc: UtcInstant,
    lastUsedAtUtc: UtcInstant,
    firstPrompt: z.string().max(FIRST_PROMPT_MAX_CHARS).optional(),
    marker: z.string().regex(SESSION_MARKER, NOT_A_SESSION_MARKER).optional(),
  }),
);
