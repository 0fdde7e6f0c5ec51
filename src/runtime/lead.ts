import { join } from "node:path";
import { LEAD } from "../core/agent-name.ts";
import { type Settings, modelClientOptions } from "../config/load.ts";
import { ShellHooks } from "../hooks/hook-runner.ts";
import { createModelClient } from "../model/factory.ts";
import { type PermissionAsker, PermissionPolicy } from "../permissions/policy.ts";
import { baseTools } from "../tools/base-tools.ts";
import { ToolPipeline } from "../tools/pipeline.ts";
import { AgentRunner } from "./agent-runner.ts";
import { DEFAULT_COMPACTION } from "./compaction.ts";
import { HistoryStore } from "./history-store.ts";
import type { RunObserver } from "./run-types.ts";
import { leadSystemPrompt } from "./system-prompt.ts";

export interface LeadRuntime {
  runner: AgentRunner;
  /** Closes what was built, newest first. */
  close(): Promise<void>;
}

export interface LeadContext {
  stateDir: string;
  workspace: string;
  observer?: RunObserver;
  /** Asks the user on a TTY; absent when headless (asking then means denying). */
  asker?: PermissionAsker;
}

/**
 * The composition root of a Lead: everything that can fail on bad configuration
 * (rules, hooks, tools) is built before the model client, and whatever was built
 * is closed again, newest first, when a later step fails.
 */
export async function buildLead(settings: Settings, context: LeadContext): Promise<LeadRuntime> {
  const closers: (() => void | Promise<void>)[] = [];
  const closeAll = async () => {
    const errors: unknown[] = [];
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "closing the Lead runtime failed in several places");
  };
  try {
    const hooks = new ShellHooks(settings.hooks);
    const policy = new PermissionPolicy({
      mode: settings.permissionMode,
      allow: settings.permissions.allow,
      deny: settings.permissions.deny,
      ask: context.asker,
    });
    const tools = new ToolPipeline({
      tools: baseTools({ shell: settings.shell }),
      policy,
      hooks,
      onWarning: (message) => context.observer?.({ type: "warning", agent: LEAD, message }),
    });
    const model = createModelClient({
      ...modelClientOptions(settings),
      onRetry: (info) => context.observer?.({ type: "model_retry", agent: LEAD, ...info }),
    });
    closers.push(() => model.close());
    const history = HistoryStore.open(context.stateDir, LEAD);
    closers.push(() => history.close());
    if (history.repaired) context.observer?.({ type: "warning", agent: LEAD, message: history.repaired });
    const runner = new AgentRunner({
      identity: LEAD,
      model,
      tools,
      hooks,
      history,
      systemPrompt: leadSystemPrompt(),
      workspace: context.workspace,
      maxTurns: settings.maxTurns,
      compaction: {
        thresholdChars: settings.compaction.thresholdChars ?? DEFAULT_COMPACTION.thresholdChars,
        largeToolResultChars: settings.compaction.largeToolResultChars ?? DEFAULT_COMPACTION.largeToolResultChars,
        resultsDir: join(context.stateDir, "tool-results", LEAD),
      },
      observer: context.observer,
    });
    return { runner, close: closeAll };
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
}
