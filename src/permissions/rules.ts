import { ConfigError } from "../core/errors.ts";
import type { ToolEffect } from "../core/tool.ts";

/**
 * A permission rule from config or flags: `read_file` (every call of the tool)
 * or `tool(pattern)`, the pattern matched against the whole of the tool's
 * subject. A path pattern is a real glob (Bun's `Glob`): `*` within one path
 * segment, `**` across segments, `{a,b}` and `[ab]` as in the shell. A command
 * pattern (`execute` tools) is matched against one simple command of the line
 * (see src/security/shell-command/): `*` matches anything there, `/` included
 * (`shell(npm test*)` must match `npm test src/a.test.ts`).
 */
export interface PermissionRule {
  /** The rule as written, for messages. */
  readonly source: string;
  readonly tool: string;
  readonly pattern: string | undefined;
  matches(tool: { name: string; effect: ToolEffect }, subject: string): boolean;
}

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
  const inPath = pattern === undefined ? undefined : new Bun.Glob(pattern);
  const inCommand = pattern === undefined ? undefined : commandPattern(pattern);
  const nameMatches = toolNameMatcher(tool);
  return {
    source,
    tool,
    pattern,
    matches(candidate, subject) {
      if (!nameMatches(candidate.name)) return false;
      if (pattern === undefined) return true;
      return candidate.effect === "execute" ? (inCommand as RegExp).test(subject) : (inPath as Bun.Glob).match(subject);
    },
  };
}

export function parseRules(sources: readonly string[] = [], list: "allow" | "deny" = "allow"): PermissionRule[] {
  return sources.map((source) => parseRule(source, list));
}
