import { LEAD } from "../../core/agent-name.ts";
import { ClaudePartialMessages } from "./claude-partial.ts";
import { type RunInfo, eventJson, initJson, resultJson } from "./result-json.ts";
import { type StreamEvent, type StreamShapes, callInput } from "./stream-shapes.ts";
import type { RunEvent, RunSubtype } from "../../runtime/run-types.ts";
import type { TeamOutcome } from "./team-outcome.ts";

// `--output-format stream-json`: the event shapes `claude -p` prints (its SDK's
// messages), so a script or the Claude Agent SDK reading them works unchanged.
// The Lead's answers and tool calls are `assistant` messages with content blocks,
// tool results `user` messages; everything else we report (teammates, mailbox,
// retries, a subagent's steps) is a `system` line whose subtype is our event type.

export function claudeShapes(version: string): StreamShapes {
  let sessionId = "";
  let model = "";
  const stamp = <T extends object>(line: T) => ({ ...line, session_id: sessionId, uuid: crypto.randomUUID() });
  // Only fed with --include-partial-messages: without it the answer's pieces and `usage` never come here (run-output.ts).
  const partial = new ClaudePartialMessages(() => model);
  const assistant = (content: unknown[]) =>
    stamp({
      type: "assistant",
      message: { id: partial.messageId(), type: "message", role: "assistant", model, content, stop_reason: null, stop_sequence: null },
      parent_tool_use_id: null,
    });
  return {
    init(info: RunInfo) {
      sessionId = info.sessionId;
      model = info.model;
      const ours = initJson(info, version);
      return [
        stamp({
          ...ours,
          cwd: info.workspace,
          tools: info.tools ?? [],
          mcp_servers: (info.mcpServers ?? []).map(({ name, status }) => ({ name, status })),
          model: info.model,
          permissionMode: info.permissionMode,
          apiKeySource: "none",
          slash_commands: [],
          output_style: "default",
          // sdk.d.ts SDKSystemMessage: the version of what runs (ours), no skills or plugins of Claude Code's kind;
          // interrupt answers carry still_queued.
          claude_code_version: version,
          skills: [],
          plugins: [],
          capabilities: ["interrupt_receipt_v1"],
          ...(info.mcpServers ? { agent_mcp_servers: info.mcpServers } : {}),
        }),
      ];
    },
    event(event: StreamEvent) {
      const lead = "agent" in event && event.agent === LEAD;
      if (lead && event.type === "assistant") return [assistant([{ type: "text", text: event.text }])];
      if (lead && event.type === "tool_call") return [assistant([{ type: "tool_use", id: event.id, name: event.name, input: callInput(event.arguments) }])];
      if (lead && event.type === "tool_result") {
        return [
          stamp({
            type: "user",
            message: { role: "user", content: [{ type: "tool_result", tool_use_id: event.id, content: event.content, is_error: event.isError }] },
            parent_tool_use_id: null,
          }),
        ];
      }
      if (lead && PARTIAL_SOURCES.has(event.type)) {
        const streamed = partial.event(event as RunEvent).map((anthropic) => stamp({ type: "stream_event", event: anthropic, parent_tool_use_id: null }));
        // model_request stays a system line too, as before; the others are partial messages only.
        if (event.type !== "model_request" && event.type !== "model_retry") return streamed;
        const { type, ...fields } = eventJson(event);
        return [stamp({ type: "system", subtype: type, ...fields }), ...streamed];
      }
      // A teammate's answer pieces and token counts are not the Lead's messages; its whole answers are system lines below.
      if (!lead && (event.type === "usage" || event.type === "tool_input_delta" || event.type === "thinking_delta")) return [];
      // claude -p does not echo the prompt back.
      if (lead && event.type === "user") return [];
      const { type, ...fields } = eventJson(event);
      return [stamp({ type: "system", subtype: type, ...fields })];
    },
    result: (outcome, info) => [stamp(claudeResult(outcome, info))],
  };
}

/** The Lead's events Claude's partial messages are made of (claude-partial.ts). */
const PARTIAL_SOURCES: ReadonlySet<string> = new Set(["assistant_delta", "tool_input_delta", "thinking_delta", "usage", "model_request", "model_retry"]);

/** Our subtypes as the SDK's (SDKResultMessage): the rest are its `error_during_execution`, ours kept in `agent_subtype`. */
const CLAUDE_SUBTYPES: Partial<Record<RunSubtype, string>> = {
  success: "success",
  error_max_turns: "error_max_turns",
  error_budget: "error_max_budget_usd",
  error_max_structured_output_retries: "error_max_structured_output_retries",
};

/**
 * The result message as the SDK's types declare it (sdk.d.ts SDKResultSuccess,
 * SDKResultError) beside our fields: `stop_reason`, `modelUsage` (one entry,
 * the command's model: the ledger counts by agent, not by model), `errors[]` on
 * an error, usage's cache counts.
 */
function claudeResult(outcome: TeamOutcome, info: RunInfo) {
  const ours = resultJson(outcome.result, info, outcome);
  const { result } = outcome;
  const total = outcome.usage?.total;
  const tokens = {
    inputTokens: total?.inputTokens ?? result.usage.inputTokens,
    outputTokens: total?.outputTokens ?? result.usage.outputTokens,
    cacheReadInputTokens: total?.cachedInputTokens ?? 0,
  };
  return {
    ...ours,
    subtype: CLAUDE_SUBTYPES[result.subtype] ?? "error_during_execution",
    agent_subtype: result.subtype,
    stop_reason: result.subtype === "success" ? "end_turn" : null,
    usage: { ...ours.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: tokens.cacheReadInputTokens },
    modelUsage: {
      [info.model]: { ...tokens, cacheCreationInputTokens: 0, webSearchRequests: 0, costUSD: ours.total_cost_usd, contextWindow: 0, maxOutputTokens: 0 },
    },
    ...(result.isError ? { errors: [result.result] } : {}),
  };
}
