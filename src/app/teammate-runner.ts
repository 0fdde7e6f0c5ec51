import { LeaseLostError } from "../leases/teammate-leases.ts";
import type { AttachmentStore } from "../attachments/attachment-store.ts";
import type { Settings } from "../config/load.ts";
import type { AgentName } from "../core/agent-name.ts";
import type { AgentDefinitions } from "../agents/agent-definitions.ts";
import type { FileLedger } from "../file-journal/file-ledger.ts";
import type { OwnershipCheck } from "../tools/checked-write.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { ModelClient } from "../model/types.ts";
import { withModel } from "../model/with-model.ts";
import type { PermissionAsker, PermissionPolicy } from "../permissions/policy.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import type { HistoryStore } from "../runtime/history-store.ts";
import { ProtectedPaths, agentDirOf } from "../security/protected-paths.ts";
import { stdioCommands } from "../config/configured-commands.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { TeammateRecord } from "../team/team-registry.ts";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { claimTaskTool } from "../tools/claim-task.ts";
import { completeTaskTool } from "../tools/complete-task.ts";
import { taskTools } from "../tools/task-tools.ts";
import { listTasksTool } from "../tools/list-tasks.ts";
import { readAttachmentTool } from "../tools/read-attachment.ts";
import { readFileTool } from "../tools/read-file.ts";
import { respondShutdownTool } from "../tools/respond-shutdown.ts";
import { sendMessageTool } from "../tools/send-message.ts";
import { type ShellToolOptions, shellTool } from "../tools/shell.ts";
import { submitPlanTool } from "../tools/submit-plan.ts";
import { writeFileTool } from "../tools/write-file.ts";
import { worktreePromptNote } from "../worktrees/worktrees.ts";
import type { RunnerFor } from "./runner-factory.ts";
import { teammateSystemPrompt } from "./system-prompt.ts";

export interface TeammateRunnerParts {
  settings: Settings;
  /** `--add-dir` directories, guarded in a worktree teammate's fence as in the Lead's. */
  addDirs?: readonly string[];
  /** The Lead's workspace's state root and sandbox, narrowed for a worktree teammate. */
  stateRoot: string;
  sandbox?: Sandbox;
  shellOptions: ShellToolOptions;
  /** The session's file versions and journal; a worktree teammate, in a checkout of its own, goes without. */
  ledger: FileLedger;
  ownership: OwnershipCheck;
  hookCommands: string[];
  definitions: AgentDefinitions;
  policy: PermissionPolicy;
  mcp: McpManager;
  model: ModelClient;
  tasks: TaskStore;
  team: TeammateRuntime;
  /** The session's attachments: a message too large for the mailbox is read on from there. */
  attachments: AttachmentStore;
  openHistory: (agent: AgentName) => Promise<HistoryStore>;
  runnerFor: RunnerFor;
  withContext: (prompt: string) => string;
  warn: (agent: string) => (message: string) => void;
}

/**
 * Builds (or rebuilds, on restore) a teammate's runner. Teammates have at most
 * four tools (no spawning, no editing helpers), and MCP tools only of the
 * servers whose config says `teammates: true`. A definition narrows the tools
 * and sets the prompt, permission mode and model; a definition gone since the
 * spawn leaves the teammate with the base settings and a warning.
 */
export async function buildTeammateRunner(teammate: TeammateRecord, parts: TeammateRunnerParts): Promise<AgentRunner> {
  const { settings, definitions, team, tasks, policy, warn } = parts;
  const definition = teammate.agent === undefined ? undefined : definitions.find(teammate.agent);
  if (teammate.agent !== undefined && !definition) {
    warn(teammate.name)(`teammate definition "${teammate.agent}" is gone: ${teammate.name} runs with the default teammate settings`);
  }
  // A worktree teammate's workspace is its worktree: its file tools, shell cwd,
  // sandbox and protected paths all take that as the workspace.
  const worktree = teammate.worktree;
  const own = worktree
    ? {
        workspace: worktree.workspace,
        fence: new ProtectedPaths({
          workspace: worktree.workspace,
          stateRoot: parts.stateRoot,
          agentDir: agentDirOf(worktree.workspace),
          hookCommands: parts.hookCommands,
          mcpCommands: stdioCommands(settings),
          ...(parts.addDirs ? { addDirs: parts.addDirs } : {}),
        }),
      }
    : undefined;
  const shell = own && parts.sandbox ? { ...settings.shell, sandbox: parts.sandbox.within(own.workspace) } : parts.shellOptions;
  const ledger = own ? undefined : parts.ledger;
  // Its version file made while its first model call is out, not by its first read (an inode
  // costs up to 1 ms on some disks, and 32 teammates' first reads come together).
  ledger?.expect(teammate.name);
  const guards = ledger ? { ledger, ownership: parts.ownership } : {};
  const all = [shellTool(ledger ? { ...shell, ledger } : shell), readFileTool(ledger ? { ledger } : {}), writeFileTool(undefined, guards), sendMessageTool(team)];
  // Until the Lead approves its plan, a plan_mode_required teammate is read-only and can submit_plan.
  const planning = teammate.plan !== undefined && teammate.plan.state !== "approved";
  const tools = [
    ...(definition?.tools ? all.filter((tool) => definition.tools!.includes(tool.name as never)) : all),
    respondShutdownTool(team),
    // A message to it may have come with an attachment, whatever its definition's tools.
    readAttachmentTool(parts.attachments),
    ...(planning ? [submitPlanTool(team)] : []),
    // The task graph for every teammate with config team.taskTools "all" (Claude Code's
    // teammates have it); else only for a self-claiming one: it sees, claims and completes tasks.
    ...(settings.team.taskTools === "all" ? taskTools(tasks) : teammate.autoClaim ? [listTasksTool(tasks), claimTaskTool(tasks), completeTaskTool(tasks)] : []),
  ];
  const mode = planning ? "plan" : (definition?.permissionMode ?? settings.permissionMode);
  // A call its mode would ask about goes to the Lead's side as a permission_request.
  const askLead: PermissionAsker = async (request, signal) => {
    const { tool, effect, subject, why, input } = request;
    const verdict = await team.requestPermission(teammate.name, { tool, effect, subject, ...(why ? { why } : {}), input }, signal);
    return verdict.allow ? { answer: "yes" } : { answer: "denied", reason: `permission denied on the Lead's side: ${verdict.reason ?? "no reason given"}` };
  };
  const modePolicy = policy.withMode(mode, askLead);
  const extraPrompt = [worktree ? worktreePromptNote(worktree) : "", definition?.prompt ?? ""].filter(Boolean).join("\n\n");
  const history = await parts.openHistory(teammate.name);
  history.guardWrites(() => (team.runsHere(teammate.name) ? undefined : new LeaseLostError(teammate.name, undefined)));
  return parts.runnerFor(teammate.name, tools, parts.withContext(teammateSystemPrompt(teammate.name, teammate.role, extraPrompt)), history, {
    sources: [parts.mcp.source("teammate")],
    policy: own ? modePolicy.withProtected(own.fence) : modePolicy,
    ...(own ?? {}),
    ...(teammate.model !== undefined ? { model: withModel(parts.model, teammate.model) } : {}),
  });
}
