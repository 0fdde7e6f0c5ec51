import { basename, join } from "node:path";
import { type AgentName, LEAD } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import { type IdSource, uuidV7Source } from "../core/ids.ts";
import { type Settings, modelClientOptions } from "../config/load.ts";
import { ShellHooks } from "../hooks/hook-runner.ts";
import type { HookSession } from "../hooks/claude-protocol.ts";
import { HookNotices } from "../hooks/hook-notices.ts";
import { ProtectedPaths, agentDirOf } from "../security/protected-paths.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import { openMailboxBackend } from "./mailbox-backend.ts";
import { watchRemoteMail } from "./remote-mail.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { McpManager } from "../mcp/manager.ts";
import { createModelClient } from "../model/factory.ts";
import { MeteredModelClient } from "../usage/metered-model.ts";
import { UsageLedger } from "../usage/usage-ledger.ts";
import type { BudgetExceededError } from "../core/errors.ts";
import { ModelSwitch } from "../model/model-switch.ts";
import { type PermissionAsker, PermissionPolicy } from "../permissions/policy.ts";
import { type TeamEvent, TeammateRuntime } from "../team/teammate-runtime.ts";
import { TeammateHosting } from "../team/teammate-hosting.ts";
import { DEFAULT_LEASE_TTL_MS, type LeaseHolder, type TeammateLeases, thisHolder } from "../leases/teammate-leases.ts";
import { readAttachmentTool } from "../tools/read-attachment.ts";
import { sendMessageTool } from "../tools/send-message.ts";
import { DEFAULT_SHELL_OUTPUT_CHARS, shellTool } from "../tools/shell.ts";
import { spawnTeammateTool } from "../tools/spawn-teammate.ts";
import { requestShutdownTool } from "../tools/request-shutdown.ts";
import { reviewPlanTool } from "../tools/review-plan.ts";
import { leadSideDecider } from "../protocols/lead-side-permissions.ts";
import { baseTools } from "../tools/base-tools.ts";
import type { PermissionDenial } from "../tools/pipeline.ts";
import type { Tool } from "../core/tool.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import { type RunTracing, runnerFactory } from "./runner-factory.ts";
import { buildTeammateRunner } from "./teammate-runner.ts";
import { CloseStack } from "./close-stack.ts";
import { EventInbox } from "../runtime/event-inbox.ts";
import { type HistoryBackend, HistoryStore } from "../runtime/history-store.ts";
import { FileLedger } from "../file-journal/file-ledger.ts";
import { ownershipCheck } from "./ownership.ts";
import type { StateStores } from "./state-stores.ts";
import { JobSupervisor } from "../runtime/job-supervisor.ts";
import type { RunObserver } from "../runtime/run-types.ts";
import { leadSystemPrompt, subagentSystemPrompt } from "./system-prompt.ts";
import { environmentFacts } from "../instructions/environment.ts";
import { contextSections } from "../instructions/prompt-context.ts";
import { readInstructionChain } from "../instructions/project-instructions.ts";
import { NestedInstructions } from "../instructions/nested-instructions.ts";
import { CronRuntime } from "../cron/cron-runtime.ts";
import { CronStore } from "../cron/cron-store.ts";
import { SkillCatalog } from "../skills/skill-catalog.ts";
import { AgentDefinitions } from "../agents/agent-definitions.ts";
import { TaskStore } from "../tasks/task-store.ts";
import { TodoList } from "../todos/todo-list.ts";
import { BackgroundJobs } from "../tools/background-jobs.ts";
import { loadSkillTool } from "../tools/load-skill.ts";
import { scheduleCronTool } from "../tools/schedule-cron.ts";
import { type SubagentRun, taskTool } from "../tools/task.ts";
import { taskTools } from "../tools/task-tools.ts";
import { todoWriteTool } from "../tools/todo-write.ts";
import { mergeTeammateTool } from "../tools/merge-teammate.ts";
import { GitWorktrees } from "../worktrees/worktrees.ts";

// The tracer's interface is known from here too.
export type { RunTracing };

/** A subagent's turn cap: it does one focused job. */
const SUBAGENT_MAX_TURNS = 25;

export interface LeadRuntime {
  runner: AgentRunner;
  team: TeammateRuntime;
  cron: CronRuntime;
  background: BackgroundJobs;
  inbox: EventInbox;
  supervisor: JobSupervisor;
  /** The MCP servers: started on first need, closed with the runtime. */
  mcp: McpManager;
  /** Every model call and turn of the session, this process's apart (usage and cost). */
  usage: UsageLedger;
  /** The model client all agents share, metered (and held to the budget). */
  model: MeteredModelClient;
  /** The permission policy every agent's calls pass (its rules, those added by answers in a session). */
  policy: PermissionPolicy;
  /** The model the metered client asks for; `use(name)` switches it for every agent's next requests. */
  modelChoice: ModelSwitch;
  /** The session's task graph, in the session's store (files or PostgreSQL). */
  tasks: TaskStore;
  /** The session's file versions and change journal, and its histories (checkpoints): `/changes`, `/rewind`. */
  files: { ledger: FileLedger; histories: HistoryBackend };
  /** Closes what was built, newest first: teammates, supervisor, the inbox's unprocessed events, histories, model client. */
  close(): Promise<void>;
}

export interface LeadContext {
  /** The session's state dir: todos, usage, tool results, and, with the file stores, everything else. */
  stateDir: string;
  /** Where histories, team, tasks and cron jobs live; the store the settings choose (with the mailbox) when absent. */
  stores?: StateStores;
  workspace: string;
  observer?: RunObserver;
  /** Team and mailbox events (teammate states, sends, claims, acks). */
  teamObserver?: (event: TeamEvent) => void;
  /** Asks the user on a TTY; absent when headless (asking then means denying). */
  asker?: PermissionAsker;
  /** The mailbox's file-system calls; tests pass the real ones with a failure injected. */
  mailboxFs?: FsOps;
  /** Time for everything the runtime stamps (messages, cron, team.json, the system prompts' date); the system clock unless a test fixes it. */
  clock?: Clock;
  /** Where message, job and task ids come from; time-ordered UUIDs unless a test wants fixed ones. */
  ids?: IdSource;
  /** How the agent introduces itself to MCP servers. */
  version?: string;
  /** Told each tool call the permission policy denied, by any agent of the runtime. */
  onPermissionDenied?: (denial: PermissionDenial & { agent: string }) => void;
  /** The OS sandbox for every agent's shell, background jobs, hooks and the runtime's git; plain `sh -c` when absent. */
  sandbox?: Sandbox;
  /** Where the user started the agent, relative to the workspace ("" or absent: its root): instructions are read down to it. */
  startDir?: string;
  /** The user's config dir, where their own AGENTS.md is; none read when absent. */
  userConfigDir?: string;
  /** `--add-dir` directories (real, absolute) the file tools may use besides the workspace; the sandbox binds them too. */
  addDirs?: readonly string[];
  /** The session's id, for worktree branches `agent/<session>/<name>`; the state dir's name when absent. */
  sessionId?: string;
  /** The state root (every session) no tool may touch; `stateDir` when absent. */
  stateRoot?: string;
  /** Told once when the budget refuses a model call: the command stops the team, leaving its work for drain. */
  onBudgetExhausted?: (error: BudgetExceededError) => void;
  /** How long a teammate's call waits for the verdict on its permission request; 5 minutes unless a test shortens it. */
  permissionTimeoutMs?: number;
  /** Told of every agent's turns and model calls, subagents' too (OpenTelemetry spans). */
  tracing?: RunTracing;
  /** Which teammates this runtime runs (docs/worker.md); by default every teammate no `agent worker` holds. */
  hosting?: HostingContext;
}

/** How a runtime shares a session's teammates with other processes (`agent worker`). */
export interface HostingContext {
  /** The session's teammate leases; the file ones of the state dir by default. */
  leases?: TeammateLeases;
  /** False (--remote-teammates): this runtime runs no teammate, workers run them all. */
  runsTeammates?: boolean;
  /** A worker takes at most this many teammates. */
  maxTeammates?: number;
  /** How long a lease lasts without a heartbeat. */
  ttlMs?: number;
  /** How often teammates run elsewhere are looked at. */
  watchEveryMs?: number;
}

/** What an `agent worker` runs: the team's runtime, without a Lead. */
export type WorkerRuntime = Pick<LeadRuntime, "team" | "supervisor" | "mcp" | "usage" | "model" | "policy" | "close">;


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

async function buildRuntime(settings: Settings, context: LeadContext, role: "lead" | "worker"): Promise<Omit<LeadRuntime, "runner"> & { runner?: AgentRunner }> {
  const clock = context.clock ?? systemClock;
  const ids = context.ids ?? uuidV7Source;
  const closers = new CloseStack();
  const closeAll = () => closers.close();
  const warn = (agent: string) => (message: string) => context.observer?.({ type: "warning", agent, message });
  try {
    const hooks = new ShellHooks(settings.hooks, {
      env: settings.shell.env,
      ...(context.sandbox ? { sandbox: context.sandbox } : {}),
      session: hookSession(settings, context),
    });
    const notices = new HookNotices(hooks, context.workspace, warn(LEAD));
    // Waited for last of all (closers run newest first): a notice started while the team closed still ends.
    closers.push(() => notices.settle());
    // Claude Code's Notification: the agent waits for a person's answer.
    const asker: PermissionAsker | undefined = context.asker
      ? (request, signal) => {
          notices.fire("Notification", { identity: request.identity, message: `agent needs your permission to use ${request.tool}` });
          return context.asker!(request, signal);
        }
      : undefined;
    const teamObserver = (event: TeamEvent) => {
      context.teamObserver?.(event);
      if (event.type === "teammate" && event.state === "idle") notices.fire("TeammateIdle", { identity: event.name, teammate: event.name, role: event.role });
    };
    // The agent's own state and configuration are not its to touch (docs/security.md).
    const fence = new ProtectedPaths({
      workspace: context.workspace,
      stateRoot: context.stateRoot ?? context.stateDir,
      agentDir: agentDirOf(context.workspace),
      hookCommands: Object.values(settings.hooks).flatMap((list) => (list ?? []).map((hook) => hook.command)),
      ...(context.addDirs ? { addDirs: context.addDirs } : {}),
    });
    const policy = new PermissionPolicy({
      mode: settings.permissionMode,
      allow: settings.permissions.allow,
      deny: settings.permissions.deny,
      ask: asker,
      protected: fence,
    });
    const shellOptions = { ...settings.shell, ...(context.sandbox ? { sandbox: context.sandbox } : {}) };
    // First of what can fail on the outside: an unreachable store ends the start here.
    // Closed last, after the inbox has released what the Lead never processed.
    const mailbox = await openMailboxBackend(settings, { stateDir: context.stateDir, sessionId: context.sessionId, fs: context.mailboxFs });
    closers.push(() => mailbox.close());
    const usage = UsageLedger.open(context.stateDir, { clock, onError: (error) => warn(LEAD)(error.message) });
    closers.push(() => usage.close());
    const modelChoice = new ModelSwitch(
      createModelClient({
        ...modelClientOptions(settings),
        onRetry: (info) => context.observer?.({ type: "model_retry", agent: LEAD, ...info }),
      }),
    );
    const model = new MeteredModelClient(
      modelChoice,
      {
        ledger: usage,
        pricing: settings.pricing,
        ...(settings.maxBudgetUsd !== undefined ? { maxBudgetUsd: settings.maxBudgetUsd } : {}),
        onBudgetExhausted: context.onBudgetExhausted,
        ...(context.tracing ? { onCall: (identity: string, name: string) => context.tracing!.modelCall(identity, name) } : {}),
      },
    );
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
    const leadSource = mcp.source("lead");
    const histories: HistoryStore[] = [];
    closers.push(() => {
      for (const history of histories) history.close();
    });
    const inbox = new EventInbox();
    // Runs after the teammates and the supervisor are closed (they are newer), so
    // nothing publishes any more: what the Lead never processed goes back to ready/.
    closers.push(() => inbox.releaseAll());
    const supervisor = new JobSupervisor((name, error) => warn(LEAD)(`${name} stopped: ${(error as Error).message}`));
    closers.push(() => supervisor.close());
    const stores = context.stores ?? mailbox.state;
    // One memory of the user's files for every agent of the runtime that works in its workspace (docs/files.md).
    const ledger = new FileLedger({
      backend: stores.files,
      clock,
      maxBlobBytes: settings.files.journalMaxBytes,
      shellScanMaxFiles: settings.files.shellScanMaxFiles,
    });
    const openHistory = async (agent: AgentName) => {
      const history = await HistoryStore.open(stores.histories, agent);
      histories.push(history);
      if (history.repaired) warn(agent)(history.repaired);
      return history;
    };
    const runnerFor = runnerFactory({
      settings,
      stateDir: context.stateDir,
      workspace: context.workspace,
      clock,
      model,
      policy,
      hooks,
      fence,
      usage,
      warn,
      observer: context.observer,
      onPermissionDenied: context.onPermissionDenied,
      tracing: context.tracing,
      notes: new NestedInstructions(context.startDir ?? ""),
      ...(context.addDirs ? { addDirs: context.addDirs } : {}),
    });

    const cron = new CronRuntime({
      inbox,
      supervisor,
      store: new CronStore(stores.cron),
      clock,
      ids,
      onError: (error) => warn(LEAD)(`cron: ${(error as Error).message}`),
    });
    closers.push(() => cron.close());
    const background = new BackgroundJobs({
      inbox,
      supervisor,
      clock,
      ids,
      env: settings.shell.env,
      ...(context.sandbox ? { sandbox: context.sandbox } : {}),
    });
    closers.push(() => background.close());

    // Every agent of the runtime reads the same project instructions and environment, once per runtime.
    const environment = environmentFacts(context.workspace, clock);
    const promptContext = contextSections({
      instructions: readInstructionChain(context.workspace, context.startDir ?? "", context.userConfigDir),
      startDir: context.startDir ?? "",
      append: settings.appendSystemPrompt,
      environment,
    });
    const withContext = (prompt: string) => `${prompt}\n\n${promptContext}`;

    // Worktree isolation (docs/team-worktrees.md): offered only in a git workspace; git runs on first need.
    const inGit = environment.git.repository;
    let openedWorktrees: Promise<GitWorktrees> | undefined;
    const worktrees = () => (openedWorktrees ??= GitWorktrees.require(context.workspace, context.sessionId ?? basename(context.stateDir), context.sandbox));
    if (settings.team.isolation === "worktree" && !inGit) {
      warn(LEAD)(`config team.isolation "worktree" is ignored: ${context.workspace} is not in a git repository, so teammates share the workspace`);
    }
    const hookCommands = Object.values(settings.hooks).flatMap((list) => (list ?? []).map((hook) => hook.command));

    const definitions = AgentDefinitions.load(context.workspace, settings.projectTrusted ? {} : { ceiling: settings.permissionMode });
    for (const problem of definitions.problems) warn(LEAD)(`teammate definition ${problem.path} skipped: ${problem.problem}`);
    // One task graph for the Lead's tools and the self-claiming teammates; a new or
    // completed task wakes those idle (`team` is read when it changes, after it is built).
    const tasks = new TaskStore({
      table: stores.tasks,
      clock,
      onChange: () => team.pokeAutoClaimers(),
      onCompleted: (task) => notices.fire("TaskCompleted", { identity: task.owner ?? LEAD, task: { id: task.id, subject: task.subject, owner: task.owner } }),
    });
    const leases = context.hosting?.leases ?? mailbox.leases;
    const holder: LeaseHolder = thisHolder(role);
    const hosting = new TeammateHosting({
      leases,
      holder,
      ttlMs: context.hosting?.ttlMs ?? DEFAULT_LEASE_TTL_MS,
      runsTeammates: context.hosting?.runsTeammates ?? true,
      ...(context.hosting?.maxTeammates !== undefined ? { maxTeammates: context.hosting.maxTeammates } : {}),
      onLost: (name, error) => team.leaseLost(name, error),
      onWarning: warn(role === "lead" ? LEAD : "worker"),
    });
    const decidePermission = leadSideDecider(policy, context.workspace, asker);
    // Writes to a path a teammate owns ask the Lead's side: a teammate's through the
    // permission protocol, the Lead's own (and its subagents') directly (`team` is read at call time).
    const ownership = ownershipCheck({
      teammates: () => team.list(),
      ask: (agent, request, signal) =>
        agent === LEAD || agent.startsWith(`${LEAD}/`) ? decidePermission(request, LEAD, ids.next(), signal) : team.requestPermission(agent as AgentName, request, signal),
    });
    const team: TeammateRuntime = new TeammateRuntime({
      hosting,
      role,
      ...(context.hosting?.watchEveryMs !== undefined ? { watchEveryMs: context.hosting.watchEveryMs } : {}),
      ...(mailbox.teamWakeups ? { teamWakeups: mailbox.teamWakeups } : {}),
      store: mailbox.store,
      attachments: stores.attachments,
      inbox,
      supervisor,
      registry: stores.team,
      histories: stores.histories,
      worktrees,
      makeRunner: (teammate) =>
        buildTeammateRunner(teammate, {
          settings,
          ...(context.addDirs ? { addDirs: context.addDirs } : {}),
          stateRoot: context.stateRoot ?? context.stateDir,
          ...(context.sandbox ? { sandbox: context.sandbox } : {}),
          shellOptions,
          ledger,
          ownership,
          hookCommands,
          definitions,
          policy,
          mcp,
          model,
          tasks,
          team,
          attachments: stores.attachments,
          openHistory,
          runnerFor,
          withContext,
          warn,
        }),
      clock,
      ids,
      observer: teamObserver,
      decidePermission,
      ...(context.permissionTimeoutMs !== undefined ? { permissionTimeoutMs: context.permissionTimeoutMs } : {}),
      tasks,
    });
    closers.push(() => team.close());
    if (mailbox.kind === "postgres" && role === "lead") for (const stop of await watchRemoteMail(mailbox, team, warn(LEAD))) closers.push(stop);
    assertShared([team, cron, background], inbox, supervisor);

    const skills = SkillCatalog.load(context.workspace);
    for (const problem of skills.problems) warn(LEAD)(`skill ${problem.path} skipped: ${problem.problem}`);
    const todos = new TodoList(context.stateDir, LEAD);
    // A one-shot subagent: fresh in-memory history, the base tools only (no task,
    // no teammates, no background jobs), the same hooks and permissions, a turn cap.
    const runSubagent: SubagentRun = async (prompt, { idempotencyKey, signal, label }) => {
      const identity = `${LEAD}/${label}`;
      const subagent = runnerFor(identity, baseTools({ shell: shellOptions, ledger, ownership }), withContext(subagentSystemPrompt()), HistoryStore.inMemory(identity), {
        maxTurns: Math.min(settings.maxTurns, SUBAGENT_MAX_TURNS),
        sources: [leadSource],
      });
      return subagent.run(prompt, { idempotencyKey, signal });
    };
    const [, ...restOfBase] = baseTools({ shell: shellOptions, ledger, ownership });
    // The Lead's tools, in the design's order (pinned by a test).
    const leadTools: Tool[] = [
      shellTool({ ...shellOptions, ledger }, background),
      ...restOfBase,
      todoWriteTool(todos, (list) => context.observer?.({ type: "todos", agent: LEAD, todos: [...list] })),
      taskTool(runSubagent),
      loadSkillTool(skills),
      ...taskTools(tasks),
      scheduleCronTool(cron),
      spawnTeammateTool(team, definitions, { git: inGit, isolation: inGit ? settings.team.isolation : "none", autoClaim: settings.team.autoClaim }),
      sendMessageTool(team),
      readAttachmentTool(stores.attachments),
      requestShutdownTool(team),
      reviewPlanTool(team),
      // Only where it can work, so a workspace without git offers the model nothing it cannot use.
      ...(inGit ? [mergeTeammateTool(team, worktrees)] : []),
    ];
    // A worker has no Lead: the Lead's history belongs to the Lead's process alone.
    const runner =
      role === "lead"
        ? runnerFor(LEAD, leadTools, withContext(settings.systemPrompt ?? leadSystemPrompt([skills.promptSection(), definitions.promptSection()].filter(Boolean).join("\n\n"))), await openHistory(LEAD), {
            reminder: () => todos.reminder(),
            sources: [leadSource],
          })
        : undefined;
    await team.restore();
    if (role === "lead") await cron.start();
    // First to run at close, while the team and servers are still up.
    if (role === "lead") closers.push(() => notices.run("SessionEnd", { identity: LEAD, reason: "other" }));
    return { ...(runner ? { runner } : {}), team, cron, background, inbox, supervisor, mcp, usage, model, policy, modelChoice, tasks, files: { ledger, histories: stores.histories }, close: closeAll };
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
}

/** Who the hooks' events belong to, as Claude Code's `session_id`, `transcript_path` and `permission_mode`. */
function hookSession(settings: Settings, context: LeadContext): HookSession {
  // The file stores keep each agent's history as JSON lines; PostgreSQL's has no file, and a subagent's lives in memory.
  const files = settings.store.kind !== "postgres";
  return {
    id: context.sessionId ?? basename(context.stateDir),
    permissionMode: settings.permissionMode,
    ...(files ? { transcriptPath: (identity: string) => (identity.includes("/") ? undefined : join(context.stateDir, "agents", `${identity}.jsonl`)) } : {}),
  };
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
