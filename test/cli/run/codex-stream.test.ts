import { expect, test } from "bun:test";
import { LEAD } from "../../../src/core/agent-name.ts";
import { ZERO_USAGE } from "../../../src/model/types.ts";
import { codexShapes } from "../../../src/cli/run/codex-stream.ts";
import type { TeamOutcome } from "../../../src/cli/run/team-outcome.ts";

// The JSON lines of `agent exec --json` as the Codex SDK reads them (its
// ThreadEvent and ThreadItem types, @openai/codex-sdk dist/index.d.ts).

const outcome = (isError: boolean): TeamOutcome => ({
  result: { result: isError ? "model failed" : "done", subtype: isError ? "error_model" : "success", isError, turns: 1, usage: { ...ZERO_USAGE, inputTokens: 7, outputTokens: 3 }, durationMs: 1 },
  events: 0,
  eventTurns: 0,
  teammates: [],
  permissionDenials: [],
});

test("the todo list is one item: started when first written, updated after, completed as the turn ends", () => {
  const shapes = codexShapes(() => false);
  const todos = (done: boolean) => ({ type: "todos" as const, agent: LEAD, todos: [{ content: "fix it", status: done ? "completed" : "in_progress" }] });
  const first = shapes.event(todos(false));
  const second = shapes.event(todos(true));
  expect(first).toEqual([{ type: "item.started", item: { id: "item_0", type: "todo_list", items: [{ text: "fix it", completed: false }] } }]);
  expect(second).toEqual([{ type: "item.updated", item: { id: "item_0", type: "todo_list", items: [{ text: "fix it", completed: true }] } }]);
  expect(shapes.result(outcome(false), {} as never)).toEqual([
    { type: "item.completed", item: { id: "item_0", type: "todo_list", items: [{ text: "fix it", completed: true }] } },
    { type: "turn.completed", usage: { input_tokens: 7, cached_input_tokens: 0, output_tokens: 3, reasoning_output_tokens: 0 } },
  ]);
  const failed = codexShapes(() => false);
  failed.event(todos(false));
  expect(failed.result(outcome(true), {} as never).map((line) => (line as { type: string }).type)).toEqual(["item.completed", "turn.failed"]);
});

test("a file tool's change is reported once done: add for a write of a file that was not there, update otherwise", () => {
  const present = new Set(["old.txt"]);
  const shapes = codexShapes((path) => present.has(path));
  const call = (id: string, name: string, args: object) => shapes.event({ type: "tool_call", agent: LEAD, id, name, arguments: JSON.stringify(args) });
  const result = (id: string, name: string, isError = false) => shapes.event({ type: "tool_result", agent: LEAD, id, name, content: "ok", isError });
  expect(call("a", "write_file", { path: "new.txt", content: "x" })).toEqual([]);
  expect(call("b", "write_file", { path: "old.txt", content: "x" })).toEqual([]);
  expect(call("c", "edit_file", { path: "gone.txt", old_string: "a", new_string: "b" })).toEqual([]);
  expect([...result("a", "write_file"), ...result("b", "write_file"), ...result("c", "edit_file", true)]).toEqual([
    { type: "item.completed", item: { id: "item_0", type: "file_change", changes: [{ path: "new.txt", kind: "add" }], status: "completed" } },
    { type: "item.completed", item: { id: "item_1", type: "file_change", changes: [{ path: "old.txt", kind: "update" }], status: "completed" } },
    { type: "item.completed", item: { id: "item_2", type: "file_change", changes: [{ path: "gone.txt", kind: "update" }], status: "failed" } },
  ]);
});

test("an MCP call's result and error in the SDK's shapes; a command's exit code only once it ran", () => {
  const shapes = codexShapes(() => true);
  const [started] = shapes.event({ type: "tool_call", agent: LEAD, id: "m", name: "mcp__docs__search", arguments: '{"q":"x"}' });
  expect(started).toEqual({ type: "item.started", item: { id: "item_0", type: "mcp_tool_call", server: "docs", tool: "search", arguments: { q: "x" }, status: "in_progress" } });
  expect(shapes.event({ type: "tool_result", agent: LEAD, id: "m", name: "mcp__docs__search", content: "found", isError: false })).toEqual([
    { type: "item.completed", item: { id: "item_0", type: "mcp_tool_call", server: "docs", tool: "search", arguments: { q: "x" }, result: { content: [{ type: "text", text: "found" }], structured_content: null }, status: "completed" } },
  ]);
  shapes.event({ type: "tool_call", agent: LEAD, id: "e", name: "mcp__docs__search", arguments: "{}" });
  expect(shapes.event({ type: "tool_result", agent: LEAD, id: "e", name: "mcp__docs__search", content: "server down", isError: true })).toEqual([
    { type: "item.completed", item: { id: "item_1", type: "mcp_tool_call", server: "docs", tool: "search", arguments: {}, error: { message: "server down" }, status: "failed" } },
  ]);
  const [command] = shapes.event({ type: "tool_call", agent: LEAD, id: "s", name: "shell", arguments: '{"command":"ls"}' });
  expect(command).toEqual({ type: "item.started", item: { id: "item_2", type: "command_execution", command: "ls", aggregated_output: "", status: "in_progress" } });
});
