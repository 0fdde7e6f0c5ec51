import { isAbsolute, join, normalize, relative, resolve } from "node:path";
import { AgentError } from "../core/errors.ts";
import { type ConfiguredCommand, configuredCommandPaths, type NamedPaths } from "./command-files.ts";
import { configLinkTargets } from "./config-links.ts";
import { realPathOf } from "./workspace-path.ts";

/** A file tool was asked for a path under the agent's own state (histories, mailboxes, locks). */
export class ProtectedPathError extends AgentError {
  readonly code = "PROTECTED_PATH";
  readonly category = "usage" as const;
  constructor(readonly requested: string) {
    super(
      `path ${JSON.stringify(requested)} is in the agent's state directory, which no tool may read or change ` +
        "(histories, mailboxes, locks); use send_message to talk to teammates, and the operator's `agent` commands to inspect state",
    );
  }
}

export interface ProtectedPathsOptions {
  /** Real path of the workspace. */
  workspace: string;
  /** The state root (`--state-dir`): nothing under it is the agent's to touch. */
  stateRoot: string;
  /** The workspace's `.agent/` directory: its config, agents and skills need explicit permission to write. */
  agentDir: string;
  /** Commands of the configured hooks: the files they run need explicit permission to write. */
  hookCommands?: readonly string[];
  /** `--add-dir` directories (real paths): their `.agent/` and `.git` are guarded as the workspace's are. */
  addDirs?: readonly string[];
  /** The stdio MCP servers configured: the files their commands name need explicit permission to write. */
  mcpCommands?: readonly ConfiguredCommand[];
  /** The home directory, for `~/` in hook and server commands. */
  home?: string;
}

/** Workspace-relative globs whose writes need an explicit allow rule or a "yes", besides the `.agent/` ones. */
const GUARDED_IN_WORKSPACE = ["skills/**", ".mcp.json"];
/**
 * git's own files, in the workspace and in any repository below it: its config,
 * hooks and attributes are what git runs, and a worktree's `.git` file says which
 * repository that is. The sandbox keeps them read-only too.
 */
const GIT_FILES = [".git", ".git/**", "**/.git", "**/.git/**"];

/**
 * The paths the agent must not touch on its own: everything under the state
 * root (never, in any mode), and its own configuration — config files, agent
 * and skill definitions, the scripts hooks run — and git's (`.git/`), which
 * only an explicit rule or the user on a terminal may let it write. Paths are compared as written
 * and after symlinks are resolved.
 */
export class ProtectedPaths {
  readonly #workspace: string;
  /** The workspace, then the added directories: each one's own files are guarded alike. */
  readonly #roots: string[];
  readonly #stateRoots: string[];
  readonly #guarded: { glob: Bun.Glob; source: string; what: string }[];
  /** Paths hook and MCP commands name (the workspace's spellings expanded), and where config files and directories link to. */
  readonly #configured: { hooks: Set<string>; mcp: Set<string>; linkTargets: string[] };

  constructor(options: ProtectedPathsOptions) {
    this.#workspace = options.workspace;
    this.#roots = [options.workspace, ...(options.addDirs ?? [])];
    const lexical = resolve(options.workspace, options.stateRoot);
    // Both spellings: a state root reached through a symlink is the same directory.
    this.#stateRoots = [...new Set([lexical, realPathOf(lexical)])];
    const agentDir = relative(options.workspace, resolve(options.workspace, options.agentDir));
    const inAgentDir = agentDir.startsWith("..") || isAbsolute(agentDir) ? [] : [agentDir];
    const globs = [
      ...inAgentDir.flatMap((dir) => [`${dir}/config*.json`, `${dir}/agents/**`, `${dir}/skills/**`]),
      ...GUARDED_IN_WORKSPACE,
    ];
    this.#guarded = [
      ...globs.map((source) => ({ glob: new Bun.Glob(source), source, what: `the agent's own configuration (${source})` })),
      ...GIT_FILES.map((source) => ({ glob: new Bun.Glob(source), source, what: `git's own files (${source}), which git runs or follows` })),
    ];
    this.#configured = configuredPaths(options, this.#roots);
  }

  get stateRoots(): readonly string[] {
    return this.#stateRoots;
  }

  /** True when `absolute` (as written or resolved) is the state root or below it; `resolved` as PathFence says. */
  inStateRoot(absolute: string, resolved?: string): boolean {
    const candidates = new Set([normalize(absolute), resolved ?? realPathOf(absolute)]);
    for (const candidate of candidates) {
      for (const root of this.#stateRoots) {
        const rel = relative(root, candidate);
        if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))) return true;
      }
    }
    return false;
  }

  /** Throws ProtectedPathError when `path` (relative to the workspace, or absolute) is under the state root. */
  assertOutsideState(path: string, resolved?: string): void {
    if (this.inStateRoot(resolve(this.#workspace, path), resolved)) throw new ProtectedPathError(path);
  }

  /**
   * Why writing `path` needs explicit permission (the guarded glob or "a file a
   * hook runs"), or undefined when it does not. Checked as written and resolved.
   */
  guardedWrite(path: string): string | undefined {
    const absolute = resolve(this.#workspace, path);
    for (const candidate of new Set([normalize(absolute), realPathOf(absolute)])) {
      if (this.#configured.hooks.has(candidate)) return "a file a configured hook runs";
      if (this.#configured.mcp.has(candidate)) return "a file a configured MCP server runs";
      const target = this.#configured.linkTargets.find((link) => candidate === link || candidate.startsWith(`${link}/`));
      if (target !== undefined) return "the agent's own configuration (a config file or directory links here)";
      for (const root of this.#roots) {
        const rel = relative(root, candidate);
        if (rel.startsWith("..") || isAbsolute(rel)) continue;
        const hit = this.#guarded.find(({ glob }) => glob.match(rel) || glob.match(`${rel}/`));
        if (hit) return hit.what;
      }
    }
    return undefined;
  }
}

/**
 * The guarded paths no glob names: what hooks and MCP servers run — each file a
 * command names, and the entry of each directory it names (`cd tools && make`:
 * `tools` is not moved aside) — as written and at their real paths; and where
 * config links to.
 */
function configuredPaths(options: ProtectedPathsOptions, roots: readonly string[]): { hooks: Set<string>; mcp: Set<string>; linkTargets: string[] } {
  const { hooks, mcp } = configuredCommandPaths({
    workspace: options.workspace,
    home: options.home ?? process.env.HOME ?? "/",
    hookCommands: options.hookCommands ?? [],
    mcpCommands: options.mcpCommands ?? [],
  });
  return { hooks: bothSpellings(hooks), mcp: bothSpellings(mcp), linkTargets: roots.flatMap((root) => configLinkTargets(root)) };
}

function bothSpellings(named: NamedPaths): Set<string> {
  const paths = new Set<string>();
  for (const path of [...named.files, ...named.directories]) {
    paths.add(normalize(path));
    try {
      paths.add(realPathOf(path));
    } catch {
      // A link loop: nothing is written through it.
    }
  }
  return paths;
}

/** The workspace's `.agent/` directory. */
export function agentDirOf(workspace: string): string {
  return join(workspace, ".agent");
}
