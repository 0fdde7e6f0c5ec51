import { describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { SequentialIds, timeKeyedId, uuidV7Source } from "../../src/core/ids.ts";
import { createMessage, MailboxMessage } from "../../src/core/message.ts";
import { checkMailboxMessage } from "../../src/core/message-check.ts";
import { expectAgreement, expectAgreementOver } from "../support/schema-agreement.ts";

// The mailbox reads every message through checkMailboxMessage, a hand-written copy
// of the MailboxMessage schema (zod stays out of `mailbox show` and the claim
// path). It must accept exactly what the schema accepts, and return the same value.

const check = (value: unknown) => {
  const checked = checkMailboxMessage(value);
  return checked.ok ? { ok: true as const, value: checked.message } : { ok: false as const };
};

describe("checkMailboxMessage agrees with the MailboxMessage schema", () => {
  const clock = new ManualClock("2026-03-01T12:00:00.000Z");
  const keyed = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: uuidV7Source });
  const foreign = createMessage(
    { sender: "alice", recipient: "lead", kind: "result", content: "done\n", inReplyTo: keyed.id, requestId: keyed.id, taskId: "t3" },
    { clock, ids: new SequentialIds() },
  );
  const valid = [{ ...keyed }, { ...foreign }];

  test("on every field replaced, removed or added, and on random mutations", () => {
    const otherTime = timeKeyedId(new Date("2026-03-01T12:00:00.001Z"))!;
    const { accepted, refused } = expectAgreementOver(MailboxMessage, check, valid, {
      extraValues: ["task", "message", "result", "Task", "task_claimed", "shutdown_request", "lead", "user", otherTime, keyed.createdAtUtc, "t1", "t0", "t123456789", "t1234567890", "T3"],
      fuzzRounds: 3_000,
    });
    // Both verdicts were exercised, many times.
    expect(accepted).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(1_000);
  });

  test("on the refinements: idempotencyKey must equal id, a time-keyed id must name createdAtUtc", () => {
    const otherId = "00000000-0000-4000-8000-0000000000ff";
    for (const value of [
      { ...foreign, idempotencyKey: otherId },
      { ...keyed, createdAtUtc: "2026-03-01T12:00:00.001Z" },
      { ...foreign, createdAtUtc: "2026-03-01T12:00:00.001Z" },
      { ...keyed, inReplyTo: undefined },
      { ...keyed, requestId: null },
    ]) {
      expectAgreement(MailboxMessage, check, value, JSON.stringify(value));
    }
    expect(checkMailboxMessage({ ...foreign, idempotencyKey: otherId })).toEqual({
      ok: false,
      problem: "idempotencyKey: idempotencyKey must equal id",
    });
  });

  test("names each problem as zod would, joined in one line", () => {
    const checked = checkMailboxMessage({ ...keyed, sender: "Bob", content: "", extra: true });
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.problem).toContain('Unrecognized key: "extra"');
    expect(checked.problem).toContain("sender: invalid agent name: it has upper-case letters");
    expect(checked.problem).toContain("content: content must not be empty");
  });
});
