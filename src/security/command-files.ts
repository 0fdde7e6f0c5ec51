import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { analyseCommandLine } from "./shell-command/analyse.ts";
import { expandWorkspaceVariables } from "./workspace-variables.ts";

/** A stdio MCP server's command as configured: the program, its arguments, where it starts. */
export interface ConfiguredCommand {
  command: string;
  args?: readonly string[];
  cwd?: string;
}

/**
 * The words of a command line that could name a file, with the workspace's
 * spellings, `~/` and `$HOME` expanded: enough to find `sh "$(pwd)/hooks/policy.sh"` or
 * `node tools/server.js` in it. Both the line split at quotes and operators (a
 * command's own path as written) and the words the shell would pass, unquoted
 * and unescaped, through `sh -c` and the other wrappers (`sh "hooks/my script.sh"`).
 */
export function commandWords(line: string, workspace: string, home: string): string[] {
  // `$(pwd)`, `` `pwd` ``, `$PWD` (commands start in the workspace) and Claude Code's `$CLAUDE_PROJECT_DIR`.
  // `$HOME` as `~`: a hook kept in the user's home (`"$HOME/.claude/hooks/x.sh"`) is the same file.
  const expanded = expandWorkspaceVariables(line, workspace).replace(/\$\{HOME\}|\$HOME(?![A-Za-z0-9_])/g, () => home);
  const raw = expanded.split(/[\s;|&<>()'"`]+/);
  const analysed = analyseCommandLine(expanded);
  const parsed = analysed.ok ? analysed.parts.flatMap((part) => [...part.argv, ...(part.runsFile !== undefined ? [part.runsFile] : [])]) : [];
  const words = [...new Set([...raw, ...parsed])].filter((word) => word !== "" && !word.startsWith("-") && !word.includes("$"));
  return words.map((word) => (word.startsWith("~/") ? `${home}${word.slice(1)}` : word));
}

/** What a command's words name, as absolute paths. */
export interface NamedPaths {
  /** Each word that is an existing file, or that has a slash and so would be one once written. */
  files: string[];
  /** Each word that is an existing directory (`cd tools && make`): its entry, not what is in it. */
  directories: string[];
}

/**
 * The paths a command names: a script the command runs need not exist yet for a
 * write to plant it, so a word with a slash counts as a file either way. The
 * workspace itself and `/` are not paths a command runs.
 */
export function pathsNamed(words: readonly string[], base: string, workspace: string): NamedPaths {
  const files = new Set<string>();
  const directories = new Set<string>();
  for (const word of words) {
    const absolute = resolve(base, word);
    if (absolute === workspace || absolute === "/") continue;
    if (existsSync(absolute)) {
      if (isDirectory(absolute)) directories.add(absolute);
      else files.add(absolute);
    } else if (word.includes("/")) {
      files.add(absolute);
    }
  }
  return { files: [...files], directories: [...directories] };
}

/** What the configured hook command lines and stdio MCP servers name, each kind on its own, expanded as commandWords says. */
export function configuredCommandPaths(input: {
  workspace: string;
  home: string;
  hookCommands: readonly string[];
  mcpCommands: readonly ConfiguredCommand[];
}): { hooks: NamedPaths; mcp: NamedPaths } {
  const { workspace, home } = input;
  const hooks = merged(input.hookCommands.map((line) => pathsNamed(commandWords(line, workspace, home), workspace, workspace)));
  const mcp = merged(
    input.mcpCommands.map((server) => {
      // An argument may be a whole shell line (`sh -c "node $PWD/x.js"`): each one's words count.
      const words = [server.command, ...(server.args ?? [])].flatMap((part) => commandWords(part, workspace, home));
      return pathsNamed(words, resolve(workspace, server.cwd ?? "."), workspace);
    }),
  );
  return { hooks, mcp };
}

/** The files hook command lines and stdio MCP servers name: what the sandbox binds read-only. */
export function configuredCommandFiles(input: Parameters<typeof configuredCommandPaths>[0]): string[] {
  const { hooks, mcp } = configuredCommandPaths(input);
  return [...new Set([...hooks.files, ...mcp.files])];
}

function merged(all: readonly NamedPaths[]): NamedPaths {
  return { files: [...new Set(all.flatMap((named) => named.files))], directories: [...new Set(all.flatMap((named) => named.directories))] };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
