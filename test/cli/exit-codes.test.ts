import { expect, test } from "bun:test";
import { EXIT_CODES, exitCodeFor } from "../../src/cli/exit-codes.ts";
import {
  AckConflictError,
  CorruptStateFileError,
  InvalidAgentNameError,
  InvalidMessageIdError,
  LockError,
  MailboxStorageError,
  MessageNotFoundError,
  StateDirBusyError,
  UnknownAgentError,
  UsageError,
} from "../../src/core/errors.ts";

test("the documented table is stable", () => {
  expect(EXIT_CODES).toEqual({ ok: 0, agent: 1, usage: 2, model: 3, busy: 4, state: 5, not_found: 6, internal: 70, interrupted: 130, terminated: 143 });
});

test("each error maps by its category", () => {
  expect(exitCodeFor(new UsageError("x"))).toBe(2);
  expect(exitCodeFor(new InvalidAgentNameError("Bob", "upper case"))).toBe(2);
  expect(exitCodeFor(new InvalidMessageIdError("x"))).toBe(2);
  expect(exitCodeFor(new StateDirBusyError("/s", { pid: 1, host: "h" }, "wait"))).toBe(4);
  expect(exitCodeFor(new MailboxStorageError("x"))).toBe(5);
  expect(exitCodeFor(new AckConflictError("x"))).toBe(5);
  expect(exitCodeFor(new LockError("x"))).toBe(5);
  expect(exitCodeFor(new CorruptStateFileError("/f", "bad"))).toBe(5);
  expect(exitCodeFor(new UnknownAgentError("bob"))).toBe(6);
  expect(exitCodeFor(new MessageNotFoundError("x", "anywhere"))).toBe(6);
});

test("system call failures are storage errors; anything else is internal", () => {
  const eacces = Object.assign(new Error("EACCES: permission denied, open '/s/x'"), { code: "EACCES", syscall: "open" });
  expect(exitCodeFor(eacces)).toBe(5);
  expect(exitCodeFor(new TypeError("undefined is not a function"))).toBe(70);
  expect(exitCodeFor("a string")).toBe(70);
});
