import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/core/errors.ts";
import { parseRule } from "../../src/permissions/rules.ts";

const shell = { name: "shell", effect: "execute" } as const;
const writeFile = { name: "write_file", effect: "edit" } as const;

describe("permission rules", () => {
  test("a bare tool name matches every call of that tool only", () => {
    const rule = parseRule("write_file");
    expect(rule.matches(writeFile, "anything/at/all")).toBe(true);
    expect(rule.matches(shell, "ls")).toBe(false);
  });

  test("in a command, * matches anything, slashes included", () => {
    const rule = parseRule("shell(git status*)");
    expect(rule.matches(shell, "git status")).toBe(true);
    expect(rule.matches(shell, "git status --short src/a.ts")).toBe(true);
    expect(rule.matches(shell, "git stash")).toBe(false);
    expect(rule.matches(shell, "echo; git status")).toBe(false);
  });

  test("in a path, * stays within a segment and ** crosses them", () => {
    expect(parseRule("write_file(src/*)").matches(writeFile, "src/a.ts")).toBe(true);
    expect(parseRule("write_file(src/*)").matches(writeFile, "src/x/a.ts")).toBe(false);
    expect(parseRule("write_file(src/**)").matches(writeFile, "src/x/a.ts")).toBe(true);
    expect(parseRule("write_file(**/*.md)").matches(writeFile, "README.md")).toBe(true);
    expect(parseRule("write_file(**/*.md)").matches(writeFile, "docs/a/b.md")).toBe(true);
    expect(parseRule("write_file(a.ts)").matches(writeFile, "aXts")).toBe(false);
  });

  test("MCP tools are named exactly, by a * pattern over names, or by their server's prefix", () => {
    const tool = (name: string) => ({ name, effect: "execute" }) as const;
    expect(parseRule("mcp__db__query").matches(tool("mcp__db__query"), "")).toBe(true);
    expect(parseRule("mcp__db__query").matches(tool("mcp__db__query_all"), "")).toBe(false);
    expect(parseRule("mcp__github__*").matches(tool("mcp__github__create_issue"), "")).toBe(true);
    expect(parseRule("mcp__github__*").matches(tool("mcp__gitlab__create_issue"), "")).toBe(false);
    expect(parseRule("mcp__github").matches(tool("mcp__github__create_issue"), "")).toBe(true);
    expect(parseRule("mcp__github").matches(tool("mcp__github_enterprise__create_issue"), "")).toBe(false);
    // A prefix is an MCP server's only: `shell` never covers `shell_x`.
    expect(parseRule("shell").matches(tool("shell__x"), "")).toBe(false);
  });

  test.each(["", "shell()", "shell(ls", "two words", "(x)", "shell(ls) extra"])("%p is a ConfigError", (source) => {
    expect(() => parseRule(source, "deny")).toThrow(ConfigError);
  });

  test("the error names the rule, the list and the expected form", () => {
    expect(() => parseRule("shell(", "deny")).toThrow(
      'malformed permissions.deny rule "shell(": write a tool name ("read_file", "mcp__github__*") or a tool name with a pattern ("shell(git status*)", "write_file(src/**)")',
    );
  });
});

test("path patterns are real globs: braces and classes", () => {
  const writeFile = { name: "write_file", effect: "edit" as const };
  const rule = parseRule("write_file({.env,secrets/*})");
  expect(rule.matches(writeFile, ".env")).toBe(true);
  expect(rule.matches(writeFile, "secrets/a")).toBe(true);
  expect(rule.matches(writeFile, "secrets/a/b")).toBe(false);
  expect(rule.matches(writeFile, "env")).toBe(false);
  expect(parseRule("write_file([ab].txt)").matches(writeFile, "a.txt")).toBe(true);
  expect(parseRule("write_file([ab].txt)").matches(writeFile, "c.txt")).toBe(false);
  expect(parseRule("write_file(*.{js,ts})").matches(writeFile, "x.ts")).toBe(true);
});
