import type { AttachmentStore } from "../attachments/attachment-store.ts";
import type { Settings } from "../config/load.ts";
import type { Clock } from "../core/clock.ts";
import type { Tool, ToolSource } from "../core/tool.ts";
import type { SessionHooks } from "../hooks/types.ts";
import { lookupModel } from "../model/catalogue/catalogue.ts";
import type { ModelClient, Usage } from "../model/types.ts";
import type { PermissionPolicy } from "../permissions/policy.ts";
import { AgentRunner } from "../runtime/agent-runner.ts";
import { DEFAULT_COMPACTION, thresholdForWindow } from "../runtime/compaction.ts";
import type { MidTurnSource } from "../runtime/event-inbox.ts";
import type { HistoryStore } from "../runtime/history-store.ts";
import type { RunObserver, RunResult } from "../runtime/run-types.ts";
import type { ProtectedPaths } from "../security/protected-paths.ts";
import { type PermissionDenial, ToolPipeline, type ToolNotes } from "../tools/pipeline.ts";
import type { UsageLedger } from "../usage/usage-ledger.ts";

/** What the runtime tells a tracer beyond the run's events. */
export interface RunTracing {
  turnStarted(identity: string, key: string): void;
  turnEnded(identity: string, result: RunResult): void;
  modelCall(identity: string, model: string): (outcome: { usage?: Usage; error?: unknown }) => void;
  toolFound(callId: string, effect: string): void;
}

/** What one agent's runner may have of its own; the runtime's when absent. */
export interface RunnerExtras {
  /** A worktree teammate's own workspace and fence; the Lead's when absent. */
  workspace?: string;
  fence?: ProtectedPaths;
  maxTurns?: number;
  reminder?: () => string | undefined;
  reminderDue?: () => boolean;
  sources?: ToolSource[];
  policy?: PermissionPolicy;
  model?: ModelClient;
  /** Looked at between the steps of every turn it runs (the Lead's: the operator's word). */
  midTurn?: MidTurnSource;
}

/** Builds the runner of one agent (the Lead, a teammate or a subagent) over the runtime's shared parts. */
export type RunnerFor = (identity: string, tools: Tool[], systemPrompt: string, history: HistoryStore, extra?: RunnerExtras) => AgentRunner;

export interface RunnerFactoryOptions {
  settings: Settings;
  workspace: string;
  /** The session's attachments: where compaction saves large tool results, read on in with read_attachment. */
  attachments: AttachmentStore;
  clock: Clock;
  model: ModelClient;
  policy: PermissionPolicy;
  hooks: SessionHooks;
  fence: ProtectedPaths;
  usage: UsageLedger;
  warn: (agent: string) => (message: string) => void;
  observer?: RunObserver;
  onPermissionDenied?: (denial: PermissionDenial & { agent: string }) => void;
  tracing?: RunTracing;
  /** Added to successful calls' results (nested AGENTS.md). */
  notes?: ToolNotes;
  /** `--add-dir` directories every agent's file tools may use besides its workspace. */
  addDirs?: readonly string[];
  /** Told when an agent's turn begins from a prompt (AgentRunnerOptions.onPrompt). */
  onPrompt?: (identity: string, key: string) => void;
}

/** Every agent of a runtime gets its runner here: one tool pipeline shape, one compaction, one usage and tracing path. */
export function runnerFactory(o: RunnerFactoryOptions): RunnerFor {
  const { settings, hooks, clock, usage, tracing } = o;
  // The model's real window when the catalogue knows it; config compaction.thresholdChars wins.
  const known = lookupModel(settings.model);
  const windowThreshold = known ? thresholdForWindow(known.contextWindow, known.maxOutputTokens) : DEFAULT_COMPACTION.thresholdChars;
  const compaction = {
    thresholdChars: settings.compaction.thresholdChars ?? windowThreshold,
    largeToolResultChars: settings.compaction.largeToolResultChars ?? DEFAULT_COMPACTION.largeToolResultChars,
    results: o.attachments,
  };
  return (identity, tools, systemPrompt, history, extra = {}) => {
    // A subagent's history is kept in memory: its calls are billed to, and ride
    // on the durable appends of, the agent that runs it.
    if (!identity.includes("/")) history.carryUsage(usage.carrierOf(identity));
    return new AgentRunner({
      identity,
      model: extra.model ?? o.model,
      tools: new ToolPipeline({
        tools,
        sources: extra.sources,
        policy: extra.policy ?? o.policy,
        hooks,
        onWarning: o.warn(identity),
        onDenied: (denial) => o.onPermissionDenied?.({ agent: identity, ...denial }),
        ...(o.notes ? { notes: o.notes } : {}),
        ...(tracing ? { onFound: ({ id, effect }: { id: string; effect: string }) => tracing.toolFound(id, effect) } : {}),
      }),
      hooks,
      history,
      clock,
      systemPrompt,
      workspace: extra.workspace ?? o.workspace,
      fence: extra.fence ?? o.fence,
      ...(o.addDirs ? { addDirs: o.addDirs } : {}),
      maxTurns: extra.maxTurns ?? settings.maxTurns,
      compaction,
      observer: o.observer,
      reminder: extra.reminder,
      reminderDue: extra.reminderDue,
      ...(extra.midTurn ? { midTurn: extra.midTurn } : {}),
      onTurnStart: ({ key }) => tracing?.turnStarted(identity, key),
      onPrompt: (key) => o.onPrompt?.(identity, key),
      onTurnEnd: ({ key, result }) => {
        // A subagent's turn runs inside its parent's: counting both would count that time twice.
        if (!identity.includes("/")) usage.recordTurn({ agent: identity, key, subtype: result.subtype, durationMs: result.durationMs });
        tracing?.turnEnded(identity, result);
      },
    });
  };
}
