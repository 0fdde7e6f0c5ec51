import { basename } from "node:path";
import { AgentDefinitions } from "../agents/agent-definitions.ts";
import { type AgentName, LEAD } from "../core/agent-name.ts";
import { DEFAULT_LEASE_TTL_MS, thisHolder } from "../leases/teammate-leases.ts";
import { leadSideDecider } from "../protocols/lead-side-permissions.ts";
import { TaskStore } from "../tasks/task-store.ts";
import { TeammateHosting } from "../team/teammate-hosting.ts";
import { TeammateRuntime } from "../team/teammate-runtime.ts";
import type { OwnershipCheck } from "../tools/checked-write.ts";
import { GitWorktrees } from "../worktrees/worktrees.ts";
import { ownershipCheck } from "./ownership.ts";
import { watchRemoteMail } from "./remote-mail.ts";
import type { RunnerFor } from "./runner-factory.ts";
import type { RuntimeBase } from "./runtime-context.ts";
import type { RuntimeEvents } from "./runtime-events.ts";
import type { RuntimeHooks } from "./runtime-hooks.ts";
import type { RuntimeModel } from "./runtime-model.ts";
import type { RuntimePolicy } from "./runtime-policy.ts";
import type { RuntimePrompt } from "./runtime-prompt.ts";
import type { RuntimeStores } from "./runtime-stores.ts";
import { type TeammateRunnerParts, buildTeammateRunner } from "./teammate-runner.ts";

/** What the team step is built from: every earlier step's parts. */
export interface TeamInputs {
  hooks: RuntimeHooks;
  policy: RuntimePolicy;
  stores: RuntimeStores;
  model: RuntimeModel;
  events: RuntimeEvents;
  prompt: RuntimePrompt;
  runnerFor: RunnerFor;
}

/** The session's teammates and task graph, and what the Lead's tools share with them. */
export interface RuntimeTeam {
  team: TeammateRuntime;
  tasks: TaskStore;
  definitions: AgentDefinitions;
  ownership: OwnershipCheck;
  /** The session's worktrees; git runs on first need. */
  worktrees: () => Promise<GitWorktrees>;
}

export async function buildTeam(base: RuntimeBase, inputs: TeamInputs): Promise<RuntimeTeam> {
  const { settings, context, clock, ids, role, closers, warn } = base;
  const { hooks, policy, stores, events } = inputs;
  const worktrees = sessionWorktrees(base, inputs.prompt.inGit);
  const definitions = AgentDefinitions.load(context.workspace, settings.projectTrusted ? {} : { ceiling: settings.permissionMode });
  for (const problem of definitions.problems) warn(LEAD)(`teammate definition ${problem.path} skipped: ${problem.problem}`);
  // One task graph for the Lead's tools and the self-claiming teammates; a new or
  // completed task wakes those idle (`team` is read when it changes, after it is built).
  const tasks = new TaskStore({
    table: stores.stores.tasks,
    clock,
    onChange: () => team.pokeAutoClaimers(),
    gates: { creating: (task, by) => hooks.gates.taskCreated(task, by), completing: (task, by) => hooks.gates.taskCompleted(task, by) },
  });
  const hosting = new TeammateHosting({
    leases: context.hosting?.leases ?? stores.mailbox.leases,
    holder: thisHolder(role),
    ttlMs: context.hosting?.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    runsTeammates: context.hosting?.runsTeammates ?? true,
    ...(context.hosting?.maxTeammates !== undefined ? { maxTeammates: context.hosting.maxTeammates } : {}),
    onLost: (name, error) => team.leaseLost(name, error),
    onWarning: warn(role === "lead" ? LEAD : "worker"),
  });
  const decidePermission = leadSideDecider(policy.policy, context.workspace, hooks.asker);
  // Writes to a path a teammate owns ask the Lead's side: a teammate's through the
  // permission protocol, the Lead's own (and its subagents') directly (`team` is read at call time).
  const ownership = ownershipCheck({
    teammates: () => team.list(),
    ask: (agent, request, signal) =>
      agent === LEAD || agent.startsWith(`${LEAD}/`) ? decidePermission(request, LEAD, ids.next(), signal) : team.requestPermission(agent as AgentName, request, signal),
  });
  const runnerParts = teammateRunnerParts(base, inputs, { definitions, ownership, tasks });
  const team: TeammateRuntime = new TeammateRuntime({
    hosting,
    role,
    ...(context.hosting?.watchEveryMs !== undefined ? { watchEveryMs: context.hosting.watchEveryMs } : {}),
    ...(stores.mailbox.teamWakeups ? { teamWakeups: stores.mailbox.teamWakeups } : {}),
    store: stores.mailbox.store,
    attachments: stores.stores.attachments,
    inbox: events.inbox,
    supervisor: events.supervisor,
    registry: stores.stores.team,
    histories: stores.stores.histories,
    worktrees,
    makeRunner: (teammate) => buildTeammateRunner(teammate, { ...runnerParts, team }),
    clock,
    ids,
    observer: hooks.teamObserver,
    // Only with a TeammateIdle hook: without one, an idle notice may go out with the last result.
    ...(hooks.gates.guardsIdle() ? { idleGate: (teammate: { name: string; role: string; workspace?: string | undefined }) => hooks.gates.teammateIdle(teammate) } : {}),
    takeStop: (teammate) => hooks.gates.takeStop(teammate),
    decidePermission,
    ...(context.permissionTimeoutMs !== undefined ? { permissionTimeoutMs: context.permissionTimeoutMs } : {}),
    tasks,
    midTurnDelivery: settings.team.midTurnDelivery,
  });
  closers.push(() => team.close());
  if (stores.mailbox.kind === "postgres" && role === "lead") for (const stop of await watchRemoteMail(stores.mailbox, team, warn(LEAD))) closers.push(stop);
  return { team, tasks, definitions, ownership, worktrees };
}

/** Worktree isolation (docs/team-worktrees.md): offered only in a git workspace; git runs on first need. */
function sessionWorktrees({ settings, context, warn }: RuntimeBase, inGit: boolean): () => Promise<GitWorktrees> {
  let opened: Promise<GitWorktrees> | undefined;
  if (settings.team.isolation === "worktree" && !inGit) {
    warn(LEAD)(`config team.isolation "worktree" is ignored: ${context.workspace} is not in a git repository, so teammates share the workspace`);
  }
  return () => (opened ??= GitWorktrees.require(context.workspace, context.sessionId ?? basename(context.stateDir), context.sandbox));
}

/** What every teammate's runner is built from, but the team itself (it does not exist yet). */
function teammateRunnerParts(
  { settings, context, warn }: RuntimeBase,
  { hooks, policy, stores, model, events, prompt, runnerFor }: TeamInputs,
  team: Pick<RuntimeTeam, "definitions" | "ownership" | "tasks">,
): Omit<TeammateRunnerParts, "team"> {
  return {
    settings,
    ...(context.addDirs ? { addDirs: context.addDirs } : {}),
    stateRoot: context.stateRoot ?? context.stateDir,
    ...(context.sandbox ? { sandbox: context.sandbox } : {}),
    shellOptions: policy.shellOptions,
    ledger: stores.ledger,
    ownership: team.ownership,
    hookCommands: hooks.commands,
    definitions: team.definitions,
    policy: policy.policy,
    mcp: model.mcp,
    model: model.model,
    tasks: team.tasks,
    attachments: stores.stores.attachments,
    openHistory: events.openHistory,
    runnerFor,
    withContext: prompt.withContext,
    warn,
  };
}
