import { LEAD } from "../core/agent-name.ts";
import type { Tool } from "../core/tool.ts";
import type { AgentRunner } from "../runtime/agent-runner.ts";
import { HistoryStore } from "../runtime/history-store.ts";
import { SkillCatalog } from "../skills/skill-catalog.ts";
import { TodoList } from "../todos/todo-list.ts";
import { baseTools } from "../tools/base-tools.ts";
import { loadSkillTool } from "../tools/load-skill.ts";
import { mergeTeammateTool } from "../tools/merge-teammate.ts";
import { readAttachmentTool } from "../tools/read-attachment.ts";
import { requestShutdownTool } from "../tools/request-shutdown.ts";
import { reviewPlanTool } from "../tools/review-plan.ts";
import { scheduleCronTool } from "../tools/schedule-cron.ts";
import { sendMessageTool } from "../tools/send-message.ts";
import { shellTool } from "../tools/shell.ts";
import { spawnTeammateTool } from "../tools/spawn-teammate.ts";
import { type SubagentRun, taskTool } from "../tools/task.ts";
import { taskTools } from "../tools/task-tools.ts";
import { todoWriteTool } from "../tools/todo-write.ts";
import type { RuntimeBase } from "./runtime-context.ts";
import type { RuntimeTeam, TeamInputs } from "./runtime-team.ts";
import { leadSystemPrompt, subagentSystemPrompt } from "./system-prompt.ts";

/** A subagent's turn cap: it does one focused job. */
const SUBAGENT_MAX_TURNS = 25;

/**
 * What a Lead in delegate mode (`--lead-mode delegate`, config lead.mode) keeps:
 * the team's coordination — spawning, messages and what they attach, the task
 * graph, plan review, shutdown. No file, shell, subagent, cron, skill, merge or MCP tool.
 */
const COORDINATION_TOOLS = new Set([
  "spawn_teammate",
  "send_message",
  "read_attachment",
  "create_task",
  "get_task",
  "list_tasks",
  "claim_task",
  "complete_task",
  "review_plan",
  "request_shutdown",
]);

/** Told to a Lead in delegate mode, so it plans around the tools it lacks. */
const DELEGATE_NOTE =
  "You are in delegate mode: you coordinate only. You have no file, shell or subagent tools; give every piece of work to a teammate (spawn_teammate, send_message, the task tools) and review, steer and shut them down.";

/** The Lead's runner: its tools (in the design's order, pinned by a test), its prompt and its history. */
export async function buildLeadRunner(base: RuntimeBase, inputs: TeamInputs, built: RuntimeTeam): Promise<AgentRunner> {
  const { settings, context, warn } = base;
  const { policy, stores, model, events, prompt, runnerFor } = inputs;
  const { team, tasks, definitions, ownership, worktrees } = built;
  const skills = SkillCatalog.load(context.workspace);
  for (const problem of skills.problems) warn(LEAD)(`skill ${problem.path} skipped: ${problem.problem}`);
  const todos = new TodoList(context.stateDir, LEAD);
  const leadSource = model.mcp.source("lead");
  const shared = { shell: policy.shellOptions, ledger: stores.ledger, ownership };
  // A one-shot subagent: fresh in-memory history, the base tools only (no task,
  // no teammates, no background jobs), the same hooks and permissions, a turn cap;
  // and read_attachment, for a large tool result its compaction saves there.
  const runSubagent: SubagentRun = async (text, { idempotencyKey, signal, label }) => {
    const identity = `${LEAD}/${label}`;
    const subagent = runnerFor(identity, [...baseTools(shared), readAttachmentTool(stores.stores.attachments)], prompt.withContext(subagentSystemPrompt()), HistoryStore.inMemory(identity), {
      maxTurns: Math.min(settings.maxTurns, SUBAGENT_MAX_TURNS),
      sources: [leadSource],
    });
    return subagent.run(text, { idempotencyKey, signal });
  };
  const [, ...restOfBase] = baseTools(shared);
  const inGit = prompt.inGit;
  const tools: Tool[] = [
    shellTool({ ...policy.shellOptions, ledger: stores.ledger }, events.background),
    ...restOfBase,
    todoWriteTool(todos, (list) => context.observer?.({ type: "todos", agent: LEAD, todos: [...list] })),
    taskTool(runSubagent),
    loadSkillTool(skills),
    ...taskTools(tasks),
    scheduleCronTool(events.cron),
    spawnTeammateTool(team, definitions, { git: inGit, isolation: inGit ? settings.team.isolation : "none", autoClaim: settings.team.autoClaim }),
    sendMessageTool(team),
    readAttachmentTool(stores.stores.attachments),
    requestShutdownTool(team),
    reviewPlanTool(team),
    // Only where it can work, so a workspace without git offers the model nothing it cannot use.
    ...(inGit ? [mergeTeammateTool(team, worktrees)] : []),
  ];
  const delegate = settings.lead.mode === "delegate";
  const systemPrompt = settings.systemPrompt ?? leadSystemPrompt([skills.promptSection(), definitions.promptSection()].filter(Boolean).join("\n\n"));
  return runnerFor(LEAD, delegate ? tools.filter((tool) => COORDINATION_TOOLS.has(tool.name)) : tools, prompt.withContext(delegate ? `${systemPrompt}\n\n${DELEGATE_NOTE}` : systemPrompt), await events.openHistory(LEAD), {
    reminder: () => todos.reminder(),
    reminderDue: () => todos.reminderDue(),
    // Delegate mode: no MCP server's tools either, which may edit or run anything.
    sources: delegate ? [] : [leadSource],
    ...(settings.team.midTurnDelivery ? { midTurn: team.leadMidTurn() } : {}),
  });
}
