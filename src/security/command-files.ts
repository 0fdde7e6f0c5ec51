import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { expandWorkspaceVariables } from "./workspace-variables.ts";

/** A stdio MCP server's command as configured: the program, its arguments, where it starts. */
export interface ConfiguredCommand {
  command: string;
  args?: readonly string[];
  cwd?: string;
}

/**
 * The words of a command line that could name a file, with the workspace's
 * spellings, `~/` and `$HOME` expanded and quotes dropped: enough to find
 * `sh "$(pwd)/hooks/policy.sh"` or `node tools/server.js` in it.
 */
export function commandWords(line: string, workspace: string, home: string): string[] {
  // `$(pwd)`, `` `pwd` ``, `$PWD` (commands start in the workspace) and Claude Code's `$CLAUDE_PROJECT_DIR`.
  // `$HOME` as `~`: a hook kept in the user's home (`"$HOME/.claude/hooks/x.sh"`) is the same file.
  const expanded = expandWorkspaceVariables(line, workspace).replace(/\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g, () => home);
  return expanded
    .split(/[\s;|&<>()'"`]+/)
    .filter((word) => word !== "" && !word.startsWith("-") && !word.includes("$"))
    .map((word) => (word.startsWith("~/") ? `${home}${word.slice(1)}` : word));
}

/**
 * The files a command names, as absolute paths: each word that is an existing
 * file, or that has a slash and so would be one once written (a script the
 * command runs need not exist yet for a write to plant it). Directories and the
 * workspace itself are not files a command runs.
 */
export function filesNamed(words: readonly string[], base: string, workspace: string): string[] {
  const files = new Set<string>();
  for (const word of words) {
    const absolute = resolve(base, word);
    if (absolute === workspace || absolute === "/") continue;
    if (existsSync(absolute)) {
      if (isFile(absolute)) files.add(absolute);
    } else if (word.includes("/")) {
      files.add(absolute);
    }
  }
  return [...files];
}

/** The files hook command lines and stdio MCP servers name, expanded as commandWords says. */
export function configuredCommandFiles(input: {
  workspace: string;
  home: string;
  hookCommands: readonly string[];
  mcpCommands: readonly ConfiguredCommand[];
}): string[] {
  const { workspace, home } = input;
  const files = new Set<string>();
  for (const line of input.hookCommands) for (const file of filesNamed(commandWords(line, workspace, home), workspace, workspace)) files.add(file);
  for (const server of input.mcpCommands) {
    const base = resolve(workspace, server.cwd ?? ".");
    // An argument may be a whole shell line (`sh -c "node $PWD/x.js"`): each one's words count.
    const words = [server.command, ...(server.args ?? [])].flatMap((part) => commandWords(part, workspace, home));
    for (const file of filesNamed(words, base, workspace)) files.add(file);
  }
  return [...files];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
