import { describe, expect, test } from "bun:test";
import { checkLockOwner } from "../../src/storage/lock-dir.ts";
import { LockOwnerSchema, RuntimeOwnerRecordSchema } from "../../src/storage/lock-owner-schemas.ts";
import { checkOwnerRecord } from "../../src/storage/runtime-lock.ts";
import { expectAgreementOver } from "../support/schema-agreement.ts";

// Every command that takes a lock may read its owner file; they are checked by
// hand (no zod at start-up) and must accept exactly what the schemas accept.
const asVerdict = (value: unknown) => (value === undefined ? { ok: false as const } : { ok: true as const, value });

describe("hand-written lock owner checks agree with their schemas", () => {
  test("owner.json of a lock directory", () => {
    const base = { pid: 4242, host: "box", token: "4242-abc" };
    const { accepted, refused } = expectAgreementOver(
      LockOwnerSchema,
      (value) => asVerdict(checkLockOwner(value)),
      [base, { ...base, start: "123456" }],
      { extraValues: [1, 2 ** 31, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, -0] },
    );
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(200);
  });

  test("the runtime lock's owner record", () => {
    const base = { pid: 4242, host: "box", startedAtUtc: "2026-03-01T12:00:00.000Z" };
    const { accepted, refused } = expectAgreementOver(
      RuntimeOwnerRecordSchema,
      (value) => asVerdict(checkOwnerRecord(value)),
      [base],
      { extraValues: [1, 7, "0", "1.5", "-1", " 12"] },
    );
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(200);
  });
});
