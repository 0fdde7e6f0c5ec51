import type { Clock } from "../core/clock.ts";
import type { IdSource } from "../core/ids.ts";
import type { BudgetExceededError } from "../core/errors.ts";
import type { Settings } from "../config/load.ts";
import type { CronRuntime } from "../cron/cron-runtime.ts";
import type { FileLedger } from "../file-journal/file-ledger.ts";
import type { TeammateLeases } from "../leases/teammate-leases.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { ModelSwitch } from "../model/model-switch.ts";
import type { PermissionAsker, PermissionPolicy } from "../permissions/policy.ts";
import type { HookSession } from "../hooks/claude-protocol.ts";
import type { SessionHooks } from "../hooks/types.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import type { EventInbox } from "../runtime/event-inbox.ts";
import type { HistoryBackend } from "../runtime/history-store.ts";
import type { JobSupervisor } from "../runtime/job-supervisor.ts";
import type { RunObserver } from "../runtime/run-types.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { TeamEvent, TeammateRuntime } from "../team/teammate-runtime.ts";
import type { BackgroundJobs } from "../tools/background-jobs.ts";
import type { PermissionDenial } from "../tools/pipeline.ts";
import type { MeteredModelClient } from "../usage/metered-model.ts";
import type { UsageLedger } from "../usage/usage-ledger.ts";
import type { CloseStack } from "./close-stack.ts";
import type { RunTracing } from "./runner-factory.ts";
import type { StateStores } from "./state-stores.ts";

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
  /** Asks the user on a TTY, or the program driving the agent (a Claude Agent SDK's canUseTool); absent when headless (asking then means denying). */
  asker?: PermissionAsker;
  /** The driving program's hooks (a Claude Agent SDK's callbacks), run after the config's for the session they are given. */
  hostHooks?: (session: HookSession) => SessionHooks;
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


/** Says a warning as one agent's: `warn("alice")("…")`. */
export type Warn = (agent: string) => (message: string) => void;

/** What every step of building a runtime is given: the settings, the caller's context, and where to leave its closers. */
export interface RuntimeBase {
  settings: Settings;
  context: LeadContext;
  role: "lead" | "worker";
  clock: Clock;
  ids: IdSource;
  /** What each step built that must be closed, pushed in the order built (closed newest first). */
  closers: CloseStack;
  warn: Warn;
}
