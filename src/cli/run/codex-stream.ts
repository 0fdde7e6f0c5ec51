import { LEAD } from "../../core/agent-name.ts";
import { isMcpTool } from "../../permissions/rules.ts";
import { type RunInfo, eventJson } from "./result-json.ts";
import { type StreamEvent, type StreamShapes, callInput } from "./stream-shapes.ts";
import type { TeamOutcome } from "./team-outcome.ts";

// `agent exec --json` (`--json` of `agent run`): the JSON lines `codex exec --json`
// prints — thread.started, turn.started, item.started/item.completed, then
// turn.completed or turn.failed. One `agent run` is one codex turn. The Lead's
// answers are agent_message items, shell calls command_execution, file tools
// file_change, MCP tools mcp_tool_call, todo lists todo_list, warnings error
// items; our other tools are `tool_call` items, and what teammates and the
// mailbox do is `agent.event` lines (docs/compat.md).

type Item = Record<string, unknown> & { id: string; type: string };

export function codexShapes(): StreamShapes {
  let items = 0;
  const nextId = () => `item_${items++}`;
  const open = new Map<string, { item: Item; name: string }>();
  const completed = (item: Item) => ({ type: "item.completed", item });

  const started = (id: string, name: string, args: unknown): Item => {
    const input = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
    if (name === "shell") return { id, type: "command_execution", command: String(input.command ?? ""), aggregated_output: "", exit_code: null, status: "in_progress" };
    if (name === "write_file" || name === "edit_file") {
      return { id, type: "file_change", changes: [{ path: String(input.path ?? ""), kind: "update" }], status: "in_progress" };
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
        return [{ type: "item.started", item }];
      }
      if (lead && event.type === "tool_result") {
        const known = open.get(event.id);
        open.delete(event.id);
        const item = known?.item ?? started(nextId(), event.name, {});
        return [completed(finished(item, event.content, event.isError))];
      }
      if (lead && event.type === "todos") {
        return [completed({ id: nextId(), type: "todo_list", items: event.todos.map((todo) => ({ text: todo.content, completed: todo.status === "completed" })) })];
      }
      if (lead && event.type === "warning") return [completed({ id: nextId(), type: "error", message: event.message })];
      if (lead && (event.type === "user" || event.type === "assistant_delta" || event.type === "model_request")) return [];
      return [{ type: "agent.event", event: eventJson(event) }];
    },
    result(outcome: TeamOutcome) {
      const { result } = outcome;
      if (result.isError) return [{ type: "turn.failed", error: { message: result.result || result.subtype } }];
      const usage = outcome.usage?.total;
      return [
        {
          type: "turn.completed",
          usage: {
            input_tokens: usage?.inputTokens ?? result.usage.inputTokens,
            cached_input_tokens: usage?.cachedInputTokens ?? 0,
            output_tokens: usage?.outputTokens ?? result.usage.outputTokens,
          },
        },
      ];
    },
  };
}
