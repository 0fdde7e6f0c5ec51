import { LEAD } from "../../core/agent-name.ts";
import { isMcpTool } from "../../permissions/rules.ts";
import { type RunInfo, eventJson } from "./result-json.ts";
import { type StreamEvent, type StreamShapes, callInput } from "./stream-shapes.ts";
import type { TeamOutcome } from "./team-outcome.ts";

// `agent exec --json` (`--json` of `agent run`): the JSON lines `codex exec --json`
// prints — thread.started, turn.started, item.started/updated/completed, then
// turn.completed or turn.failed — as the Codex SDK parses them. One `agent run`
// is one codex turn. The Lead's answers are agent_message items, shell calls
// command_execution, file tools file_change (`add` for a file that was not there
// when the call was made), MCP tools mcp_tool_call, its todo list one todo_list
// item (started, updated, completed at the turn's end), warnings error items; our
// other tools are `tool_call` items, and what teammates and the mailbox do is
// `agent.event` lines (docs/compat.md).

type Item = Record<string, unknown> & { id: string; type: string };

/** `exists` tells whether a path a file tool names (relative to the workspace, or absolute) is there now. */
export function codexShapes(exists: (path: string) => boolean): StreamShapes {
  let items = 0;
  const nextId = () => `item_${items++}`;
  const open = new Map<string, { item: Item; name: string }>();
  const completed = (item: Item) => ({ type: "item.completed", item });
  let todoList: Item | undefined;

  const started = (id: string, name: string, args: unknown): Item => {
    const input = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
    if (name === "shell") return { id, type: "command_execution", command: String(input.command ?? ""), aggregated_output: "", status: "in_progress" };
    if (name === "write_file" || name === "edit_file") {
      const path = String(input.path ?? "");
      // Asked when the call is made, before the tool runs: was there a file to update? (edit_file needs one.)
      return { id, type: "file_change", changes: [{ path, kind: name === "write_file" && path !== "" && !exists(path) ? "add" : "update" }], status: "in_progress" };
    }
    if (isMcpTool(name)) {
      const [, server = "", ...tool] = name.split("__");
      return { id, type: "mcp_tool_call", server, tool: tool.join("__"), arguments: args, status: "in_progress" };
    }
    return { id, type: "tool_call", name, arguments: args, status: "in_progress" };
  };

  const finished = (item: Item, content: string, isError: boolean): Item => {
    const status = isError ? "failed" : "completed";
    if (item.type === "command_execution") return { ...item, aggregated_output: content, exit_code: isError ? 1 : 0, status };
    if (item.type === "file_change") return { ...item, status };
    if (item.type === "mcp_tool_call") return isError ? { ...item, error: { message: content }, status } : { ...item, result: { content: [{ type: "text", text: content }], structured_content: null }, status };
    return { ...item, result: content, status };
  };

  return {
    init: (info: RunInfo) => [{ type: "thread.started", thread_id: info.sessionId }, { type: "turn.started" }],
    event(event: StreamEvent) {
      const lead = "agent" in event && event.agent === LEAD;
      if (lead && event.type === "assistant") return [completed({ id: nextId(), type: "agent_message", text: event.text })];
      if (lead && event.type === "tool_call") {
        const item = started(nextId(), event.name, callInput(event.arguments));
        open.set(event.id, { item, name: event.name });
        // codex reports a patch once applied: file_change has no in-progress state.
        return item.type === "file_change" ? [] : [{ type: "item.started", item }];
      }
      if (lead && event.type === "tool_result") {
        const known = open.get(event.id);
        open.delete(event.id);
        const item = known?.item ?? started(nextId(), event.name, {});
        return [completed(finished(item, event.content, event.isError))];
      }
      if (lead && event.type === "todos") {
        const first = todoList === undefined;
        todoList = { id: todoList?.id ?? nextId(), type: "todo_list", items: event.todos.map((todo) => ({ text: todo.content, completed: todo.status === "completed" })) };
        return [{ type: first ? "item.started" : "item.updated", item: todoList }];
      }
      if (lead && event.type === "warning") return [completed({ id: nextId(), type: "error", message: event.message })];
      if (lead && (event.type === "user" || event.type === "assistant_delta" || event.type === "model_request")) return [];
      // An answer's pieces and its token count: codex exec has no partial messages.
      if (event.type === "usage" || event.type === "tool_input_delta" || event.type === "thinking_delta") return [];
      return [{ type: "agent.event", event: eventJson(event) }];
    },
    result(outcome: TeamOutcome) {
      const { result } = outcome;
      // The plan ends with the turn, as codex's does.
      const plan = todoList ? [completed(todoList)] : [];
      if (result.isError) return [...plan, { type: "turn.failed", error: { message: result.result || result.subtype } }];
      const usage = outcome.usage?.total;
      return [
        ...plan,
        {
          type: "turn.completed",
          usage: {
            input_tokens: usage?.inputTokens ?? result.usage.inputTokens,
            cached_input_tokens: usage?.cachedInputTokens ?? 0,
            output_tokens: usage?.outputTokens ?? result.usage.outputTokens,
            // Reasoning tokens are not told apart here: a reasoning model's are in output_tokens.
            reasoning_output_tokens: 0,
          },
        },
      ];
    },
  };
}
