import { CLAUDE_TOOL_NAMES } from "../../core/claude-tool-names.ts";
import { UsageError } from "../../core/errors.ts";

// Claude Code's tool names in --allowedTools/--disallowedTools, as the permission
// rules of our tools they stand for. A name not listed (an MCP tool, one of ours)
// is taken as written.

/**
 * One --allowedTools/--disallowedTools value as permission rules: entries are
 * separated by commas or spaces outside parentheses (`"Bash(git log:*) Read"`,
 * `"Bash,Edit"`), each a tool name with an optional pattern.
 */
export function claudeToolRules(value: string, flag: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of value) {
    if (char === "(") depth += 1;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current !== "") entries.push(current);
      current = "";
      continue;
    }
    current += char;
  }
  if (current !== "") entries.push(current);
  if (entries.length === 0) throw new UsageError(`${flag} needs a tool name, e.g. ${flag} "Bash(git diff:*),Read"`);
  const allow = flag === "--allowedTools";
  return entries.map((entry) => claudeRule(entry, allow));
}

function claudeRule(entry: string, allow: boolean): string {
  // Allowed whole, Claude's Bash is the shell with what it writes (PermissionRule.wholeShell); denied, it is `shell`.
  if (allow && (entry === "Bash" || entry === "Bash(*)")) return "Bash";
  const open = entry.indexOf("(");
  const name = open === -1 ? entry : entry.slice(0, open);
  const tool = CLAUDE_TOOL_NAMES[name] ?? name;
  if (open === -1) return tool;
  let pattern = entry.slice(open + 1, entry.endsWith(")") ? -1 : undefined);
  // Claude's `git diff:*` is a command prefix: ours writes it `git diff*`.
  if (tool === "shell" && pattern.endsWith(":*")) pattern = `${pattern.slice(0, -2)}*`;
  else if (tool !== "shell" && pattern.startsWith("./")) pattern = pattern.slice(2);
  return `${tool}(${pattern})`;
}
