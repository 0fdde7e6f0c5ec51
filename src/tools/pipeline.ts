import type { z } from "zod";
import type { HookOutcome, Hooks } from "../hooks/types.ts";
import type { ToolCall, ToolSpec } from "../model/types.ts";
import type { PermissionPolicy } from "../permissions/policy.ts";
import { redact } from "../security/redact.ts";
import { ToolSpecCache } from "./schemas.ts";
import type { Tool, ToolContext, ToolEffect, ToolResult, ToolSource } from "../core/tool.ts";
import type { ToolExecutor } from "../runtime/tool-executor.ts";

export interface ToolPipelineOptions {
  /** In the order the model is told about them. */
  tools: readonly Tool[];
  /** Tools offered after `tools`, as available at each model call (MCP servers'). */
  sources?: readonly ToolSource[];
  policy: PermissionPolicy;
  hooks?: Hooks;
  /** Told each hook warning (a hook that failed, timed out or could not start), e.g. to print on stderr. */
  onWarning?: (warning: string) => void;
  /** Told each call the permission policy or a PreToolUse hook denied, for the run's `permission_denials`. */
  onDenied?: (denial: PermissionDenial) => void;
  /** Told which tool a call found, before its input is checked (a trace span's `tool.effect`). */
  onFound?: (call: { id: string; tool: string; effect: ToolEffect }) => void;
  /** Asked after a call that succeeded: text to add to its result (nested AGENTS.md on a first read under a directory). */
  notes?: ToolNotes;
}

/** What may add to a successful call's result, e.g. src/instructions/nested-instructions.ts. */
export interface ToolNotes {
  after(tool: string, input: unknown, context: ToolContext): string | undefined;
}

export interface PermissionDenial {
  tool: string;
  /** The model's id of the denied call (Claude's `tool_use_id`). */
  callId: string;
  /** The validated input. */
  input: unknown;
  reason: string;
}

function failure(content: string): ToolResult {
  return { content, isError: true };
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(input)"}: ${issue.message}`).join("; ");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs one tool call in the fixed order: find the tool → parse the arguments →
 * validate → PreToolUse hooks → permission policy → handler → PostToolUse hooks.
 * Each step sees only calls the previous ones let through, so a hook never sees
 * invalid input and the person asked for permission never sees a call a hook
 * blocked. Everything that goes wrong becomes an error result for the model: a
 * bad call must not end the turn.
 */
export class ToolPipeline implements ToolExecutor {
  readonly #tools: readonly Tool[];
  readonly #byName: Map<string, Tool>;
  readonly #sources: readonly ToolSource[];
  readonly #policy: PermissionPolicy;
  readonly #hooks: Hooks | undefined;
  readonly #onWarning: (warning: string) => void;
  readonly #onDenied: (denial: PermissionDenial) => void;
  readonly #onFound: ToolPipelineOptions["onFound"];
  readonly #notes: ToolNotes | undefined;
  readonly #specCache = new ToolSpecCache();

  constructor(options: ToolPipelineOptions) {
    this.#tools = options.tools;
    this.#byName = new Map(options.tools.map((tool) => [tool.name, tool]));
    if (this.#byName.size !== options.tools.length) throw new Error("two tools share a name; tool names must be unique");
    this.#sources = options.sources ?? [];
    this.#policy = options.policy;
    this.#hooks = options.hooks;
    this.#onWarning = options.onWarning ?? (() => {});
    this.#onDenied = options.onDenied ?? (() => {});
    this.#onFound = options.onFound;
    this.#notes = options.notes;
  }

  async prepare(signal: AbortSignal): Promise<void> {
    for (const source of this.#sources) await source.prepare(signal);
  }

  specs(): ToolSpec[] {
    const offered = [...this.#tools, ...this.#sources.flatMap((source) => source.tools())];
    return this.#specCache.specs(offered.filter((tool) => !this.#policy.deniesWhole(tool.name)));
  }

  #find(name: string): Tool | string {
    const tool = this.#byName.get(name) ?? this.#sources.flatMap((source) => source.tools()).find((t) => t.name === name);
    if (tool) return tool;
    for (const source of this.#sources) {
      const why = source.unavailable(name);
      if (why !== undefined) return why;
    }
    const names = [...this.#byName.keys(), ...this.#sources.flatMap((source) => source.tools().map((t) => t.name))];
    return `unknown tool ${JSON.stringify(name)}; available tools: ${names.join(", ")}`;
  }

  concurrent(call: ToolCall): boolean {
    const tool = this.#find(call.name);
    return typeof tool !== "string" && tool.concurrent === true;
  }

  /** A built-in tool that only reads: an MCP server's read-only hint is its own claim, not ours to rely on. */
  readOnly(call: ToolCall): boolean {
    return this.#byName.get(call.name)?.effect === "read";
  }

  async execute(call: ToolCall, context: ToolContext): Promise<ToolResult> {
    let result: ToolResult;
    try {
      result = await this.#execute(call, context);
    } catch (error) {
      // A throwing hook runner or policy is a bug, but still not a reason to end the turn.
      result = failure(`${call.name} failed: ${messageOf(error)}`);
    }
    // What a tool returns goes to the model and into the history: no secret may ride along.
    return { ...result, content: redact(result.content) };
  }

  async #execute(call: ToolCall, context: ToolContext): Promise<ToolResult> {
    if (context.signal.aborted) return failure("interrupted");
    const tool = this.#find(call.name);
    if (typeof tool === "string") return failure(tool);
    this.#onFound?.({ id: call.id, tool: tool.name, effect: tool.effect });

    let raw: unknown;
    try {
      // Some models send "" for a call without arguments.
      raw = call.arguments.trim() === "" ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return failure(`invalid JSON arguments: ${messageOf(error)}; send the arguments as one JSON object`);
    }
    const parsed = tool.input.safeParse(raw);
    if (!parsed.success) return failure(`invalid input for ${tool.name}: ${formatIssues(parsed.error)}`);
    const input = parsed.data;

    const base = { tool: tool.name, input, identity: context.identity, idempotencyKey: context.idempotencyKey, callId: call.id };
    const pre = await this.#runHooks("PreToolUse", base, tool.name, context);
    // `continue: false` stops the call too: the model hears why, and the turn goes on without it.
    const refused = pre?.blocked ?? pre?.stopped;
    if (refused !== undefined) {
      const reason = `blocked by PreToolUse hook: ${refused}`;
      // A hook's deny or block is a denial as claude -p reports it; a bare `continue: false` stops, it does not deny.
      if (pre?.blocked !== undefined) this.#onDenied({ tool: tool.name, callId: call.id, input, reason });
      return failure(reason);
    }

    const decision = await this.#policy.decide(tool, input, pre?.permission ? { ...context, hookPermission: pre.permission } : context);
    if (decision.behavior === "deny") {
      this.#onDenied({ tool: tool.name, callId: call.id, input, reason: decision.reason });
      return failure(decision.reason);
    }

    // Allowed with another input (the Claude Agent SDK's updatedInput): checked as the model's was.
    let allowed = input;
    if (decision.input !== undefined) {
      const changed = tool.input.safeParse(decision.input);
      if (!changed.success) return failure(`the input ${tool.name} was allowed with is not valid: ${formatIssues(changed.error)}`);
      allowed = changed.data;
    }
    const result = await this.#runHandler(tool, allowed, context);
    if (context.signal.aborted) return result;

    const post = await this.#runHooks("PostToolUse", { ...base, input: allowed, result }, tool.name, context);
    const objection = post?.blocked ?? post?.stopped;
    if (objection !== undefined) {
      // The action already happened; the model must still learn that a hook objected to it.
      return failure(`${result.content}\n\n[blocked by PostToolUse hook: ${objection}]`);
    }
    const note = result.isError ? undefined : this.#notes?.after(tool.name, allowed, context);
    const added = [...(note !== undefined ? [note] : []), ...(post?.context ? [`[PostToolUse hook: ${post.context.join("\n")}]`] : [])];
    return added.length === 0 ? result : { ...result, content: [result.content, ...added].join("\n\n") };
  }

  async #runHandler(tool: Tool, input: unknown, context: ToolContext): Promise<ToolResult> {
    try {
      const result = await tool.run(input, context);
      return context.signal.aborted ? failure("interrupted") : result;
    } catch (error) {
      return failure(context.signal.aborted ? "interrupted" : messageOf(error));
    }
  }

  async #runHooks(
    event: "PreToolUse" | "PostToolUse",
    payload: Record<string, unknown>,
    toolName: string,
    context: ToolContext,
  ): Promise<HookOutcome | undefined> {
    if (!this.#hooks) return undefined;
    const outcome = await this.#hooks.run(event, payload, { workspace: context.workspace, toolName, signal: context.signal });
    for (const warning of outcome.warnings) this.#onWarning(warning);
    return outcome;
  }
}
