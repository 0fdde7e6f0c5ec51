import { z } from "zod";
import { UtcInstant } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

// The lock owner files as zod schemas: the declarative form of checkLockOwner
// (lock-dir.ts) and checkOwnerRecord (runtime-lock.ts), which are hand-written so
// that commands taking a lock start without zod; a test holds each pair to the
// same verdicts.

/** `<lock>/owner.json` of a cross-process lock directory. */
export const LockOwnerSchema = lazySchema(() =>
  z.strictObject({
    pid: z.number().int().positive(),
    host: z.string(),
    token: z.string(),
    start: z.string().optional(),
  }),
);

/** The runtime lock's owner record. */
export const RuntimeOwnerRecordSchema = lazySchema(() =>
  z.strictObject({
    pid: z.number().int().positive(),
    host: z.string().min(1),
    startedAtUtc: UtcInstant,
  }),
);
