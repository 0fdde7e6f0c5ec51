import { expect, test } from "bun:test";
import { errorJson, wantsJsonErrors } from "../../src/cli/error-json.ts";
import { parseTimeout } from "../../src/cli/run/runtime-args.ts";
import { MissingApiKeyError, UsageError } from "../../src/core/errors.ts";

test("JSON errors follow --output json|stream-json in the raw tokens, before --", () => {
  expect(wantsJsonErrors(["run", "--output", "json", "--bogus"])).toBe(true);
  expect(wantsJsonErrors(["run", "--output=stream-json"])).toBe(true);
  expect(wantsJsonErrors(["run", "--output", "text"])).toBe(false);
  // claude -p's and codex exec's names for it.
  expect(wantsJsonErrors(["run", "--output-format", "json", "--bogus"])).toBe(true);
  expect(wantsJsonErrors(["run", "--output-format=stream-json"])).toBe(true);
  expect(wantsJsonErrors(["run", "--json"])).toBe(true);
  expect(wantsJsonErrors(["mailbox", "list", "--json"])).toBe(false);
  expect(wantsJsonErrors(["run", "--output", "json", "--output", "text"])).toBe(false);
  expect(wantsJsonErrors(["run", "--output", "yaml"])).toBe(false);
  expect(wantsJsonErrors(["run", "--", "--output", "json"])).toBe(false);
  expect(wantsJsonErrors(["mailbox", "list"])).toBe(false);
});

test("the error object names the exit code, its meaning and the error's code", () => {
  expect(errorJson(new UsageError("x"), "x")).toEqual({
    type: "result",
    subtype: "error_usage",
    is_error: true,
    result: "x",
    exit_code: 2,
    exit_meaning: "usage or configuration error",
    error_code: "USAGE",
  });
  expect(errorJson(new MissingApiKeyError(), "no key")).toMatchObject({ subtype: "error_model", exit_code: 3, error_code: "MISSING_API_KEY" });
  expect(errorJson(new Error("bug"), "bug")).toMatchObject({ subtype: "error_internal", exit_code: 70 });
  expect(errorJson(new Error("bug"), "bug")).not.toHaveProperty("error_code");
});

test("--timeout: a bare number is seconds; units as before", () => {
  expect(parseTimeout("60")).toBe(60_000);
  expect(parseTimeout("1.5")).toBe(1_500);
  expect(parseTimeout("90s")).toBe(90_000);
  expect(parseTimeout("1h30m")).toBe(5_400_000);
  expect(() => parseTimeout("0")).toThrow("--timeout must be longer than 0");
  expect(() => parseTimeout("soon")).toThrow("invalid duration");
});
