import type { z } from "zod";

/** What every tool call carries: who asks, under which idempotency key, where, and how to stop. */
export interface ToolContext {
  /** The agent making the call (`lead`, a teammate name, a subagent id): trusted, never model input. */
  identity: string;
  /** The key of the turn this call belongs to (for a teammate: the mailbox message id). */
  idempotencyKey: string;
  /** The model's id of this tool call, where there is one (the file journal names it). */
  callId?: string;
  /** Absolute, real path of the workspace the file tools and `shell` are confined to. */
  workspace: string;
  signal: AbortSignal;
  /** The agent's own state, which file tools refuse and listings leave out; absent in tests of a bare tool. */
  fence?: PathFence;
  /**
   * A PreToolUse hook's answer for this call (Claude Code's `permissionDecision`):
   * `allow` answers the question a person would be asked, `ask` asks one even
   * where the rules allow. Deny rules and refusals hold either way.
   */
  hookPermission?: { decision: "allow" | "ask"; reason?: string };
  /** `--add-dir` directories (real, absolute) the file tools may use besides the workspace. */
  addDirs?: readonly string[];
}

/** What file tools ask before touching a path (built by the composition root from the state root). */
export interface PathFence {
  /**
   * Throws a clear error when `path` (as written or resolved) is under the state
   * root. `resolved`: its real path, when the caller has it (see inStateRoot).
   */
  assertOutsideState(path: string, resolved?: string): void;
  /**
   * True when the absolute path (as written or resolved) is under the state root.
   * `resolved`: its real path when the caller has it — resolved in the same
   * synchronous step, or read from the descriptor it names — so it is not
   * resolved again.
   */
  inStateRoot(absolute: string, resolved?: string): boolean;
  /**
   * The state root as written and resolved: a directory walk that follows no
   * symlink compares the paths it lists against these, with no system call.
   */
  readonly stateRoots: readonly string[];
  /**
   * Why writing `path` needs explicit permission (the agent's config, git's files,
   * a hook's script), or undefined. File tools ask again about where a write really
   * lands, after opening it.
   */
  guardedWrite?(path: string): string | undefined;
}

export interface ToolResult {
  content: string;
  isError?: boolean;
}

/**
 * How a tool touches the world, for the permission modes: `read` and
 * `coordinate` (team and planning tools) run in every mode; `edit` tools are
 * allowed by `acceptEdits`; `execute` tools (shell) need an explicit allow (or
 * `bypassPermissions`) when headless.
 */
export type ToolEffect = "read" | "coordinate" | "edit" | "execute";

export interface Tool<Input extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  /** Strict zod schema of the input; the model's JSON schema is generated from it. */
  readonly input: Input;
  /**
   * The JSON schema the model sees, for a tool whose schema is not ours (an MCP
   * server's, passed through as is); its `input` then validates against it.
   */
  readonly parameters?: Record<string, unknown>;
  readonly effect: ToolEffect;
  /**
   * Calls of this tool that the model makes side by side in one reply run at the
   * same time (spawn_teammate: 32 teammates start together, not one after
   * another). Only for tools that touch no workspace file and keep their own
   * state's order (the team's writes are serialized where they are stored).
   */
  readonly concurrent?: boolean;
  /** The text permission rules and hook matchers see for a call, e.g. the command or the path. */
  subject(input: z.infer<Input>): string;
  run(input: z.infer<Input>, context: ToolContext): Promise<ToolResult>;
}

/** Helps define a tool with its input type inferred from the schema. */
export function defineTool<Input extends z.ZodType>(tool: Tool<Input>): Tool<Input> {
  return tool;
}

/**
 * Tools that come and go while a runtime lives (an MCP server's): offered
 * after the built-in tools, through the same pipeline.
 */
export interface ToolSource {
  /** Called at the start of each turn, e.g. to start servers on first need; never throws. */
  prepare(signal: AbortSignal): Promise<void>;
  /** The tools available now. */
  tools(): readonly Tool[];
  /** Why the tool `name` is not available now, when it is one of this source's; else undefined. */
  unavailable(name: string): string | undefined;
}
