/**
 * Claude Code's tool names and ours they stand for: in --allowedTools and
 * --disallowedTools (src/cli/run/compat-tools.ts) and in hook matchers
 * (src/hooks/claude-protocol.ts). A name not listed is taken as written.
 */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Bash: "shell",
  Read: "read_file",
  Write: "write_file",
  Edit: "edit_file",
  MultiEdit: "edit_file",
  Glob: "glob",
  Grep: "grep",
  LS: "glob",
  Task: "task",
  TodoWrite: "todo_write",
};
