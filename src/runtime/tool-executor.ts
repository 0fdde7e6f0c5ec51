import type { ToolContext, ToolResult } from "../core/tool.ts";
import type { ToolCall, ToolSpec } from "../model/types.ts";

/** Runs the model's tool calls through the whole pipeline; what the runner depends on. */
export interface ToolExecutor {
  /** Called at the start of each turn, before `specs()`; never throws. */
  prepare?(signal: AbortSignal): Promise<void>;
  /** What the model is told, in the tools' fixed order. */
  specs(): ToolSpec[];
  /** Whether `call` may run at the same time as its neighbours that may too (see Tool.concurrent). */
  concurrent?(call: ToolCall): boolean;
  /**
   * Whether running `call` changes nothing outside the agent (a built-in tool that
   * only reads): a crash that makes the agent ask the model again and run it
   * again does no harm, so the call need not be durable before it runs.
   */
  readOnly?(call: ToolCall): boolean;
  /** Never throws for a bad call: invalid input, a block, a denial or a handler error come back as error results. */
  execute(call: ToolCall, context: ToolContext): Promise<ToolResult>;
}
