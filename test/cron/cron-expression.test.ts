import { describe, expect, test } from "bun:test";
import { InvalidCronError, isValidCron, nextCronRun } from "../../src/cron/cron-expression.ts";

const at = new Date("2026-01-01T00:00:00.000Z");
const next = (expression: string, after = at) => nextCronRun(expression, after, "UTC").toISOString();

function refusal(expression: string): InvalidCronError {
  try {
    nextCronRun(expression, at, "UTC");
  } catch (error) {
    return error as InvalidCronError;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to be refused`);
}

describe("cron expressions", () => {
  test("5-field expressions give the first run strictly after the given time", () => {
    expect(next("*/15 * * * *")).toBe("2026-01-01T00:15:00.000Z");
    expect(next("0 9 * * 1-5")).toBe("2026-01-01T09:00:00.000Z");
    expect(next("0 * * * *", new Date("2026-01-01T01:00:00.000Z"))).toBe("2026-01-01T02:00:00.000Z");
    expect(next("  30  6 1 * *  ")).toBe("2026-01-01T06:30:00.000Z");
    expect(next("0 0 * * sun")).toBe("2026-01-04T00:00:00.000Z");
  });

  test("the fields are read in the given time zone", () => {
    expect(nextCronRun("0 9 * * *", at, "Europe/Berlin").toISOString()).toBe("2026-01-01T08:00:00.000Z");
  });

  test.each([
    ["* * * * * *", /6 fields given; a seconds field is not supported/],
    ["0 0 1 1 * 2030", /6 fields given/],
    ["@daily", /aliases such as @daily are not accepted/],
    ["", /it is empty/],
    ["* * * *", /4 field\(s\) given/],
    ["garbage", /1 field\(s\) given/],
    ["61 * * * *", /expected range 0-59/],
    ["*/0 * * * *", /cannot repeat at every 0 time/],
    ["0 0 30 2 *", /day of month/],
    ["H * * * *", /hashed `H` form/],
    ["a b c d e", /invalid cron expression/],
  ])("%j is refused with the fix", (expression, reason) => {
    const error = refusal(expression);
    expect(error).toBeInstanceOf(InvalidCronError);
    expect(error.category).toBe("usage");
    expect(error.message).toMatch(reason);
    expect(error.message).toContain("use 5 fields: minute hour day-of-month month day-of-week, e.g. '*/15 * * * *'");
  });

  test("isValidCron agrees", () => {
    expect(isValidCron("0 0 * * thu")).toBe(true);
    expect(isValidCron("* * * * * *")).toBe(false);
  });
});
