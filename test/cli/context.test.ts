import { expect, test } from "bun:test";
import { resolveStateDir } from "../../src/cli/context.ts";

test("--state-dir wins over AGENT_STATE_DIR, which wins over <cwd>/.agent/state", () => {
  const env = { AGENT_STATE_DIR: "/from/env" };
  expect(resolveStateDir({ "state-dir": "/from/flag" }, env, "/cwd")).toBe("/from/flag");
  expect(resolveStateDir({}, env, "/cwd")).toBe("/from/env");
  expect(resolveStateDir({}, {}, "/cwd")).toBe("/cwd/.agent/state");
  expect(resolveStateDir({}, { AGENT_STATE_DIR: "" }, "/cwd")).toBe("/cwd/.agent/state");
});

test("relative paths are made absolute against the cwd", () => {
  expect(resolveStateDir({ "state-dir": "s" }, {}, "/cwd")).toBe("/cwd/s");
  expect(resolveStateDir({}, { AGENT_STATE_DIR: "../e" }, "/cwd/sub")).toBe("/cwd/e");
});

test("an empty --state-dir is a usage error", () => {
  expect(() => resolveStateDir({ "state-dir": "" }, {}, "/cwd")).toThrow("--state-dir needs a directory path");
});
