import { ConfigError } from "../core/errors.ts";
import type { ToolEffect } from "../core/tool.ts";

/**
 * A permission rule from config or flags: `read_file` (every call of the tool)
 * or `tool(pattern)`, the pattern matched against the whole of the tool's
 * subject. A path pattern is a real glob (Bun's `Glob`): `*` within one path
 * segment, `**` across segments, `{a,b}` and `[ab]` as in the shell. A command
 * pattern (`execute` tools) is matched against one simple command of the line
 * (see src/security/shell-command/): `*` matches anything there, `/` included
 * (`shell(npm test*)` must match `npm test src/a.test.ts`). An MCP tool's
 * pattern is matched, the same way, against the canonical JSON of the call's
 * arguments (src/permissions/mcp-call.ts).
 *
 * `write_file`, `edit_file` and `edit` name one family, every way of changing
 * a file: a rule on any of them (bare or with a path) matches every call whose
 * effect is `edit` — the two file tools, a file a shell line writes, a path
 * argument of an MCP tool — so `write_file(.env)` in the deny list stops
 * `edit_file .env` and `echo x > .env` too.
 */
export interface PermissionRule {
  /** The rule as written, for messages. */
  readonly source: string;
  readonly tool: string;
  readonly pattern: string | undefined;
  /** How many characters of a command pattern come before its first `*`: what it spells out literally. */
  readonly literalPrefix: number;
  /**
   * Claude Code's `Bash` (or `Bash(*)`): every command line, with the files it
   * writes — the shell as Claude Code's rule allows it, bounded by the sandbox.
   * A `shell` rule allows the commands; what a line writes stays an edit.
   */
  readonly wholeShell: boolean;
  /** Whether the rule names the tool `name` (its pattern aside); for the edit family, any family member. */
  names(name: string): boolean;
  matches(tool: { name: string; effect: ToolEffect }, subject: string): boolean;
}

/** The tool names of the edit family; `edit` is a name for the family only, not a tool. */
export const EDIT_FAMILY = ["write_file", "edit_file", "edit"] as const;

/** The candidate a file changed by another tool (a shell redirection, an MCP path argument) is ruled as. */
export const FILE_EDIT = { name: "edit", effect: "edit" } as const;

// A tool name may hold `*` (`mcp__github__*`), matching any run of name characters.
const RULE_SYNTAX = /^([A-Za-z_*][\w*-]*)(?:\((.*)\))?$/s;

/**
 * Whether a rule's tool part names `name`: equal, a `*` pattern over names, or
 * an MCP server's prefix (`mcp__github` covers every `mcp__github__…` tool).
 */
function toolNameMatcher(tool: string): (name: string) => boolean {
  // The syntax allows only word characters, `-` and `*` here: nothing to escape.
  if (tool.includes("*")) {
    const pattern = new RegExp(`^${tool.replaceAll("*", "[\\w-]*")}$`);
    return (name) => pattern.test(name);
  }
  if (tool.startsWith("mcp__") && !tool.slice(5).includes("__")) return (name) => name === tool || name.startsWith(`${tool}__`);
  return (name) => name === tool;
}

/** A command pattern: `*` is any text; everything else literal. */
function commandPattern(pattern: string): RegExp {
  const source = pattern
    .split("*")
    .map((piece) => piece.replace(/[\\^$.|?+()[\]{}]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`, "s");
}

/** Whether `name` is an MCP tool (`mcp__server__tool`), whose subject is its arguments' JSON. */
export function isMcpTool(name: string): boolean {
  return name.startsWith("mcp__");
}

/** Throws `ConfigError` naming the rule and the expected form when it is malformed. */
export function parseRule(source: string, list: "allow" | "deny" = "allow"): PermissionRule {
  const parsed = RULE_SYNTAX.exec(source);
  if (!parsed || parsed[2] === "") {
    throw new ConfigError(
      `malformed permissions.${list} rule ${JSON.stringify(source)}: write a tool name ("read_file", "mcp__github__*") or a tool name with a pattern ("shell(git status*)", "write_file(src/**)")`,
    );
  }
  const tool = parsed[1] as string;
  const pattern = parsed[2];
  if (tool === CLAUDE_SHELL && (pattern === undefined || pattern === "*")) return wholeShellRule(source);
  const inPath = pattern === undefined ? undefined : new Bun.Glob(pattern);
  const inText = pattern === undefined ? undefined : commandPattern(pattern);
  const nameMatches = toolNameMatcher(tool);
  const family = EDIT_FAMILY.some((name) => nameMatches(name));
  const names = (name: string) => nameMatches(name) || (family && (EDIT_FAMILY as readonly string[]).includes(name));
  return {
    source,
    tool,
    pattern,
    literalPrefix: pattern === undefined ? 0 : pattern.split("*")[0]?.length ?? 0,
    wholeShell: false,
    names,
    matches(candidate, subject) {
      if (candidate.effect === "edit" && !isMcpTool(candidate.name)) {
        if (!family) return false;
        return pattern === undefined || (inPath as Bun.Glob).match(subject);
      }
      if (!nameMatches(candidate.name)) return false;
      if (pattern === undefined) return true;
      if (candidate.effect === "execute" || isMcpTool(candidate.name)) return (inText as RegExp).test(subject);
      return (inPath as Bun.Glob).match(subject);
    },
  };
}

/** Claude Code's name for the shell tool, a rule of its own here (PermissionRule.wholeShell). */
const CLAUDE_SHELL = "Bash";

/** `Bash`: every `shell` call, and what its lines write (the policy's write check reads `wholeShell`). */
function wholeShellRule(source: string): PermissionRule {
  return {
    source,
    tool: "shell",
    pattern: undefined,
    literalPrefix: 0,
    wholeShell: true,
    names: (name) => name === "shell",
    matches: (candidate) => candidate.name === "shell" && candidate.effect === "execute",
  };
}

export function parseRules(sources: readonly string[] = [], list: "allow" | "deny" = "allow"): PermissionRule[] {
  return sources.map((source) => parseRule(source, list));
}
