import { expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveWorkspace, runStateDir } from "../../../src/cli/run/workspace.ts";
import { tempDir } from "../../support/temp-dir.ts";

test("the workspace is the real path of an existing directory, relative to the cwd", () => {
  const root = realpathSync(tempDir());
  mkdirSync(join(root, "w"));
  symlinkSync(join(root, "w"), join(root, "link"));
  expect(resolveWorkspace(undefined, join(root, "w"))).toBe(join(root, "w"));
  expect(resolveWorkspace("link", root)).toBe(join(root, "w"));
  expect(() => resolveWorkspace("missing", root)).toThrow(/workspace .*missing does not exist; create it/);
  writeFileSync(join(root, "file"), "");
  expect(() => resolveWorkspace("file", root)).toThrow("is not a directory");
  expect(() => resolveWorkspace("", root)).toThrow("--workspace needs a directory path");
});

test("the state dir defaults to <workspace>/.agent/state; --state-dir and AGENT_STATE_DIR win", () => {
  expect(runStateDir({}, "/w", {}, "/cwd")).toBe("/w/.agent/state");
  expect(runStateDir({}, "/w", { AGENT_STATE_DIR: "" }, "/cwd")).toBe("/w/.agent/state");
  expect(runStateDir({}, "/w", { AGENT_STATE_DIR: "s" }, "/cwd")).toBe("/cwd/s");
  expect(runStateDir({ "state-dir": "/x" }, "/w", { AGENT_STATE_DIR: "s" }, "/cwd")).toBe("/x");
});
