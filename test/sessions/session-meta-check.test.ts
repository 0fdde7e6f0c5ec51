import { describe, expect, test } from "bun:test";
import { checkSessionMeta } from "../../src/sessions/session-meta.ts";
import { SessionMetaSchema } from "../../src/sessions/session-meta-schema.ts";
import { expectAgreementOver } from "../support/schema-agreement.ts";

// Admin commands read every session.json through checkSessionMeta (no zod at their
// start-up); it must accept exactly what the schema accepts.
describe("checkSessionMeta agrees with the session.json schema", () => {
  test("on every field replaced, removed or added, and on random mutations", () => {
    const base = {
      version: 1,
      id: "019ca945-0a00-7000-8000-000000000001",
      createdAtUtc: "2026-03-01T12:00:00.000Z",
      lastUsedAtUtc: "2026-03-01T12:05:00.000Z",
    };
    const check = (value: unknown) => checkSessionMeta(value);
    const { accepted, refused } = expectAgreementOver(
      SessionMetaSchema,
      check,
      [base, { ...base, name: "ci-42", firstPrompt: "Write schema.sql", marker: "0f".repeat(32) }],
      { extraValues: [1, 2, "1", "a".repeat(200), "a".repeat(201), "ci.42_x", ".hidden", "a".repeat(64), "a".repeat(65), "A".repeat(64), "0f".repeat(31)] },
    );
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(200);
  });
});
