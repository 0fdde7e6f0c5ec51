import { isAbsolute, resolve } from "node:path";
import type { HookEvent } from "../config/config.ts";
import { CLAUDE_TOOL_NAMES } from "../core/claude-tool-names.ts";

// Claude Code's hook protocol beside ours (docs/hooks.md#claude-codes-protocol):
// their stdin keys added to ours, their tool names accepted in matchers.

/** A tool's names a matcher is tried against: ours, then each Claude name for it (`shell` → `Bash`). */
export function matcherNames(tool: string): string[] {
  return [tool, ...Object.entries(CLAUDE_TOOL_NAMES).filter(([, ours]) => ours === tool).map(([theirs]) => theirs)];
}

/** The session a hook's event belongs to, as Claude Code names it on stdin. */
export interface HookSession {
  id: string;
  /** The agent's history file (JSON lines), where the store keeps one on disk. */
  transcriptPath?: (identity: string) => string | undefined;
  permissionMode?: string;
  /**
   * The prompt the event follows (Claude Code's `prompt_id`): the key of the
   * Lead's latest user turn in this process, absent before the first.
   */
  promptId?: () => string | undefined;
}

/** The team's events: their `team_name` is the session's id (a session has one team). */
const TEAM_EVENTS: ReadonlySet<HookEvent> = new Set(["TeammateIdle", "TaskCreated", "TaskCompleted"]);

/** Our file tools' `path`, also as the absolute `file_path` their scripts read (`jq -r .tool_input.file_path`). */
const FILE_TOOLS = new Set(["read_file", "write_file", "edit_file"]);

/**
 * Claude Code's stdin keys for an event built from our payload (`tool`,
 * `input`, `result`, `prompt`, `stopHookActive`, …). Ours stay in the object
 * too: a hook written for either reads what it knows.
 */
export function claudeKeys(event: HookEvent, payload: Record<string, unknown>, cwd: string, session: HookSession | undefined): Record<string, unknown> {
  const identity = typeof payload.identity === "string" ? payload.identity : undefined;
  const transcript = identity !== undefined ? session?.transcriptPath?.(identity) : undefined;
  const promptId = session?.promptId?.();
  const keys: Record<string, unknown> = {
    ...(session ? { session_id: session.id } : {}),
    ...(transcript !== undefined ? { transcript_path: transcript } : {}),
    cwd,
    hook_event_name: event,
    ...(promptId !== undefined ? { prompt_id: promptId } : {}),
    ...(session?.permissionMode !== undefined ? { permission_mode: session.permissionMode } : {}),
  };
  if (typeof payload.tool === "string") {
    keys.tool_name = payload.tool;
    keys.tool_input = toolInput(payload.tool, payload.input, cwd);
    if (typeof payload.callId === "string") keys.tool_use_id = payload.callId;
  }
  if ("result" in payload && event === "PostToolUse") keys.tool_response = payload.result;
  if (typeof payload.prompt === "string") keys.prompt = payload.prompt;
  if (typeof payload.stopHookActive === "boolean") keys.stop_hook_active = payload.stopHookActive;
  if (typeof payload.message === "string") keys.message = payload.message;
  if (typeof payload.source === "string") keys.source = payload.source;
  if (typeof payload.reason === "string" && event === "SessionEnd") keys.reason = payload.reason;
  if (typeof payload.trigger === "string") keys.trigger = payload.trigger;
  if (TEAM_EVENTS.has(event)) Object.assign(keys, teamKeys(payload, session));
  return keys;
}

/** TeammateIdle's `teammate_name`, the task events' `task_id`, `task_subject`, `task_description`, and `team_name`. */
function teamKeys(payload: Record<string, unknown>, session: HookSession | undefined): Record<string, unknown> {
  const keys: Record<string, unknown> = session ? { team_name: session.id } : {};
  if (typeof payload.teammate === "string") keys.teammate_name = payload.teammate;
  const task = payload.task;
  if (typeof task === "object" && task !== null) {
    const { id, subject, description } = task as { id?: unknown; subject?: unknown; description?: unknown };
    if (typeof id === "string") keys.task_id = id;
    if (typeof subject === "string") keys.task_subject = subject;
    if (typeof description === "string") keys.task_description = description;
  }
  return keys;
}

function toolInput(tool: string, input: unknown, cwd: string): unknown {
  if (!FILE_TOOLS.has(tool) || typeof input !== "object" || input === null) return input;
  const path = (input as { path?: unknown }).path;
  if (typeof path !== "string") return input;
  return { ...input, file_path: isAbsolute(path) ? path : resolve(cwd, path) };
}
