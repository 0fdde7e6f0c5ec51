import { z } from "zod";
import { MAILBOX_STATES } from "../core/mailbox-state.ts";
import { UtcInstant } from "../core/message.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * A quarantine reason record (quarantine.ts) as a zod schema: the declarative form
 * of checkQuarantineRecord, which the reading commands use to stay zod-free; a
 * test holds the two to the same verdicts.
 */
export const QuarantineRecordSchema = lazySchema(() =>
  z.strictObject({
    agent: z.string(),
    from: z.enum(MAILBOX_STATES),
    originalName: z.string(),
    reason: z.string(),
    quarantinedAtUtc: UtcInstant,
  }),
);
