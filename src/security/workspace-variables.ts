/**
 * A hook's command as the words it runs would name files: `$(pwd)`, `` `pwd` ``,
 * `$PWD` and `$CLAUDE_PROJECT_DIR` (braced or not) are the workspace there — a
 * hook runs in the workspace with CLAUDE_PROJECT_DIR set to it — so
 * `sh "$(pwd)/hooks/policy.sh"` names `<workspace>/hooks/policy.sh`, not `/hooks/policy.sh`.
 */
export function expandWorkspaceVariables(command: string, workspace: string): string {
  return command.replace(/\$\(\s*pwd(?:\s+-[LP])?\s*\)|`\s*pwd(?:\s+-[LP])?\s*`|\$\{(?:PWD|CLAUDE_PROJECT_DIR)\}|\$(?:PWD|CLAUDE_PROJECT_DIR)(?![A-Za-z0-9_])/g, () => workspace);
}
