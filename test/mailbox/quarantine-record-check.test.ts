import { describe, expect, test } from "bun:test";
import { checkQuarantineRecord } from "../../src/mailbox/quarantine.ts";
import { QuarantineRecordSchema } from "../../src/mailbox/quarantine-record-schema.ts";
import { expectAgreementOver } from "../support/schema-agreement.ts";

// `mailbox list/show` read quarantine reason records by hand (no zod at start-up).
describe("checkQuarantineRecord agrees with the reason record's schema", () => {
  test("on every field replaced, removed or added, and on random mutations", () => {
    const base = {
      agent: "alice",
      from: "ready",
      originalName: "notes.txt",
      reason: "file name does not end in .json",
      quarantinedAtUtc: "2026-03-01T12:00:00.000Z",
    };
    const check = (value: unknown) => {
      const checked = checkQuarantineRecord(value);
      return checked.ok ? { ok: true as const, value: checked.record } : { ok: false as const };
    };
    const { accepted, refused } = expectAgreementOver(QuarantineRecordSchema, check, [base, { ...base, from: "processing" }], {
      extraValues: ["ready", "processing", "done", "quarantine", "Ready"],
    });
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(200);
  });
});
