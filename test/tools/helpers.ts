import { realpathSync } from "node:fs";
import { join } from "node:path";
import { ProtectedPaths } from "../../src/security/protected-paths.ts";
import type { Tool, ToolContext, ToolResult } from "../../src/core/tool.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A fresh real workspace directory and a context for calls in it. */
export function workspaceContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    identity: "lead",
    idempotencyKey: "00000000-0000-4000-8000-000000000001",
    workspace: realpathSync(tempDir("agent-ws-")),
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** A workspace context whose fence guards `<workspace>/.agent` as the state root, as the composition root does. */
export function fencedContext(): ToolContext & { stateRoot: string; fence: ProtectedPaths } {
  const context = workspaceContext();
  const stateRoot = join(context.workspace, ".agent");
  const fence = new ProtectedPaths({ workspace: context.workspace, stateRoot, agentDir: stateRoot });
  return { ...context, fence, stateRoot };
}

/** Calls a tool's handler directly, with the input checked by its schema first as the pipeline does. */
export function call(tool: Tool, input: unknown, context: ToolContext): Promise<ToolResult> {
  return tool.run(tool.input.parse(input), context);
}

/** The error a handler throws (the pipeline turns it into an error result). */
export async function failure(tool: Tool, input: unknown, context: ToolContext): Promise<Error> {
  const error = await call(tool, input, context).then(
    (result) => new Error(`expected a throw, got ${JSON.stringify(result)}`),
    (e: unknown) => e as Error,
  );
  return error;
}
