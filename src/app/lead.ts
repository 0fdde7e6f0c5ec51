import { LEAD } from "../core/agent-name.ts";
import { systemClock } from "../core/clock.ts";
import { uuidV7Source } from "../core/ids.ts";
import type { Settings } from "../config/load.ts";
import { NestedInstructions } from "../instructions/nested-instructions.ts";
import type { EventInbox } from "../runtime/event-inbox.ts";
import type { JobSupervisor } from "../runtime/job-supervisor.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import { CloseStack } from "./close-stack.ts";
import { buildLeadRunner } from "./lead-runner.ts";
import { type RunTracing, type RunnerFor, runnerFactory } from "./runner-factory.ts";
import type { LeadContext, LeadRuntime, RuntimeBase, Warn, WorkerRuntime } from "./runtime-context.ts";
import { wireEvents } from "./runtime-events.ts";
import { wireHooks } from "./runtime-hooks.ts";
import { openModel } from "./runtime-model.ts";
import { wirePolicy } from "./runtime-policy.ts";
import { promptContext } from "./runtime-prompt.ts";
import { openStores } from "./runtime-stores.ts";
import { type TeamInputs, buildTeam } from "./runtime-team.ts";

// The runtime's types are known from here too.
export type { HostingContext, LeadContext, LeadRuntime, WorkerRuntime } from "./runtime-context.ts";
export type { RunTracing };

/**
 * The composition root: one EventInbox and one JobSupervisor, shared by every
 * component that produces events or background work. Whatever can fail on bad
 * configuration is built before the model client; whatever was built is closed
 * again, newest first, also when a later step fails.
 */
export async function buildLead(settings: Settings, context: LeadContext): Promise<LeadRuntime> {
  const built = await buildRuntime(settings, context, "lead");
  return built as LeadRuntime;
}

/**
 * The runtime of `agent worker`: the same teammates, tools, hooks, permissions
 * and model client as a Lead's runtime builds (one code path), but no Lead: no
 * Lead runner or history, no cron, and its team takes only the teammates whose
 * lease it gets.
 */
export async function buildWorker(settings: Settings, context: LeadContext): Promise<WorkerRuntime> {
  return buildRuntime(settings, context, "worker");
}

/**
 * The steps, in the order they are built (and closed in reverse): hooks and the
 * permission policy (nothing started), the stores (the first thing that can fail
 * on the outside), the model client and MCP servers, the event plumbing, the
 * team, and the Lead's runner.
 */
async function buildRuntime(settings: Settings, context: LeadContext, role: "lead" | "worker"): Promise<Omit<LeadRuntime, "runner"> & { runner?: AgentRunner }> {
  const warn: Warn = (agent) => (message) => context.observer?.({ type: "warning", agent, message });
  const base: RuntimeBase = { settings, context, role, clock: context.clock ?? systemClock, ids: context.ids ?? uuidV7Source, closers: new CloseStack(), warn };
  const closeAll = () => base.closers.close();
  try {
    const hooks = wireHooks(base);
    const policy = wirePolicy(base, hooks);
    const stores = await openStores(base);
    const model = openModel(base, stores.usage);
    const events = wireEvents(base, stores.stores);
    const runnerFor = runnersOf(base, { hooks, policy, stores, model });
    const inputs: TeamInputs = { hooks, policy, stores, model, events, prompt: promptContext(base), runnerFor };
    const built = await buildTeam(base, inputs);
    assertShared([built.team, events.cron, events.background], events.inbox, events.supervisor);
    // A worker has no Lead: the Lead's history belongs to the Lead's process alone.
    const runner = role === "lead" ? await buildLeadRunner(base, inputs, built) : undefined;
    await built.team.restore();
    if (role === "lead") await events.cron.start();
    // First to run at close, while the team and servers are still up.
    if (role === "lead") base.closers.push(() => hooks.notices.run("SessionEnd", { identity: LEAD, reason: "other" }));
    const { inbox, supervisor, cron, background } = events;
    return {
      ...(runner ? { runner } : {}),
      team: built.team,
      tasks: built.tasks,
      cron,
      background,
      inbox,
      supervisor,
      mcp: model.mcp,
      model: model.model,
      modelChoice: model.modelChoice,
      usage: stores.usage,
      policy: policy.policy,
      files: { ledger: stores.ledger, histories: stores.stores.histories },
      close: closeAll,
    };
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
}

/** How each agent's runner is made: one model client, policy, hooks and fence for all of them. */
function runnersOf({ settings, context, clock, warn }: RuntimeBase, parts: Pick<TeamInputs, "hooks" | "policy" | "stores" | "model">): RunnerFor {
  return runnerFactory({
    settings,
    workspace: context.workspace,
    attachments: parts.stores.stores.attachments,
    clock,
    model: parts.model.model,
    policy: parts.policy.policy,
    hooks: parts.hooks.hooks,
    fence: parts.policy.fence,
    usage: parts.stores.usage,
    warn,
    observer: context.observer,
    onPermissionDenied: context.onPermissionDenied,
    tracing: context.tracing,
    notes: new NestedInstructions(context.startDir ?? ""),
    ...(context.addDirs ? { addDirs: context.addDirs } : {}),
    // A user's prompt is the Lead's turn from a prompt; a teammate's or a subagent's turn follows one.
    onPrompt: (identity, key) => {
      if (identity === LEAD) parts.hooks.promptStarted(key);
    },
  });
}

/** Two queues or two owners of background work would lose events: refuse to build that. */
export function assertShared(
  components: { inbox: EventInbox; supervisor: JobSupervisor }[],
  inbox: EventInbox,
  supervisor: JobSupervisor,
): void {
  for (const component of components) {
    if (component.inbox !== inbox || component.supervisor !== supervisor) {
      throw new Error(
        `composition error: ${component.constructor.name} must share the runtime's one EventInbox and JobSupervisor`,
      );
    }
  }
}
