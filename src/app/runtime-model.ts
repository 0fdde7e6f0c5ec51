import { LEAD } from "../core/agent-name.ts";
import { modelClientOptions } from "../config/load.ts";
import { McpManager } from "../mcp/manager.ts";
import { createModelClient } from "../model/factory.ts";
import { ModelSwitch } from "../model/model-switch.ts";
import { DEFAULT_SHELL_OUTPUT_CHARS } from "../tools/shell.ts";
import { MeteredModelClient } from "../usage/metered-model.ts";
import type { UsageLedger } from "../usage/usage-ledger.ts";
import type { RuntimeBase } from "./runtime-context.ts";

/** What the agents think with and call out to: the one metered model client, its switch, and the MCP servers. */
export interface RuntimeModel {
  modelChoice: ModelSwitch;
  model: MeteredModelClient;
  mcp: McpManager;
}

export function openModel({ settings, context, closers, warn }: RuntimeBase, usage: UsageLedger): RuntimeModel {
  const modelChoice = new ModelSwitch(
    createModelClient({
      ...modelClientOptions(settings),
      onRetry: (info) => context.observer?.({ type: "model_retry", agent: LEAD, ...info }),
    }),
  );
  const model = new MeteredModelClient(modelChoice, {
    ledger: usage,
    pricing: settings.pricing,
    ...(settings.maxBudgetUsd !== undefined ? { maxBudgetUsd: settings.maxBudgetUsd } : {}),
    onBudgetExhausted: context.onBudgetExhausted,
    ...(context.tracing ? { onCall: (identity: string, name: string) => context.tracing!.modelCall(identity, name) } : {}),
  });
  closers.push(() => model.close());
  // Built before anything it could outlive; servers start on first need, and
  // closing kills every stdio server (its process group included).
  const mcp = new McpManager({
    ...settings.mcp,
    workspace: context.workspace,
    client: { name: "agent", version: context.version ?? "0.0.0" },
    maxOutputChars: DEFAULT_SHELL_OUTPUT_CHARS,
    commandEnv: settings.shell.env,
    onWarning: warn(LEAD),
    ...(context.sandbox ? { sandbox: context.sandbox } : {}),
  });
  closers.push(() => mcp.close());
  return { modelChoice, model, mcp };
}
