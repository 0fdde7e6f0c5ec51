import type { McpServerStatus } from "../../mcp/manager.ts";
import type { RunEvent, RunResult } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import type { TeamOutcome } from "./team-outcome.ts";
import { reportJson } from "../../usage/agent-usage.ts";

// The machine-readable shapes of `agent run --output json|stream-json`. Keys are
// snake_case (the convention of JSON CLIs scripts already parse); the result object
// is the same in both formats, so a script can switch format without changing code.

export const OUTPUT_FORMATS = ["text", "json", "stream-json"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What the run was, beside what it returned: printed in the result and the init line. */
export interface RunInfo {
  agent: string;
  model: string;
  workspace: string;
  /** The session the run belongs to: what `--resume` takes. */
  sessionId: string;
  /** The session's own directory under the state root. */
  stateDir: string;
  permissionMode: string;
  /** The shell's sandbox mode, or "unavailable" when the default could not be had here. */
  sandbox?: string;
  /** The user turn's key (a UUIDv7): what to grep the history for. Absent for `drain`, which has no user turn. */
  idempotencyKey?: string;
  /** The MCP servers and their tools, once started (stream-json's init line only). */
  mcpServers?: McpServerStatus[];
  /** The tools the Lead's model is offered (Claude's stream-json init line only). */
  tools?: string[];
}

/**
 * The result object; with the team's part (teammates, events) for `run` and `drain`.
 * It carries `claude -p`'s field names too (num_turns, duration_api_ms, total_cost_usd,
 * permission_denials' tool_name/tool_use_id/tool_input), so its scripts read it unchanged.
 */
export function resultJson(result: RunResult, info: RunInfo, team?: TeamOutcome) {
  const cost = team?.usage?.total.costUsd;
  return {
    type: "result",
    subtype: result.subtype,
    is_error: result.isError,
    result: result.result,
    turns: result.turns,
    num_turns: result.turns,
    model_retries: result.modelRetries ?? 0,
    // The whole command's usage, every agent's (the Lead's own turns' alone when there is no ledger).
    ...(team?.usage ? reportJson(team.usage) : { usage: { input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens } }),
    // No figure rather than a wrong one when a call's model has no price: 0 would add up as free.
    total_cost_usd: cost ?? null,
    ...(cost === undefined ? { cost_note: unknownPrice(info.model) } : {}),
    duration_ms: result.durationMs,
    duration_api_ms: team?.usage?.total.apiMs ?? 0,
    ...(team?.structuredOutput !== undefined ? { structured_output: team.structuredOutput } : {}),
    agent: info.agent,
    model: info.model,
    session_id: info.sessionId,
    idempotency_key: info.idempotencyKey,
    workspace: info.workspace,
    state_dir: info.stateDir,
    ...(team ? teamJson(team) : {}),
  };
}

/** Why a result has no cost, and the fix: in the result's `cost_note` and, once, as a warning. */
export function unknownPrice(model: string): string {
  return `no known price for model ${JSON.stringify(model)}: total_cost_usd is null; add its price to config "pricing" (docs/observability.md)`;
}

function teamJson(team: TeamOutcome) {
  return {
    events: team.events,
    event_turns: team.eventTurns,
    teammates: team.teammates.map(({ name, role, state, failure }) => ({ name, role, state, ...(failure !== undefined ? { failure } : {}) })),
    permission_denials: team.permissionDenials.map(({ agent, tool, callId, input, reason }) => ({
      agent,
      tool,
      input: inputSummary(input),
      reason,
      tool_name: tool,
      tool_use_id: callId,
      tool_input: input,
    })),
  };
}

const INPUT_SUMMARY_MAX = 200;

/** A denied call's input in a line: the command or path it was about, else its JSON; clipped. */
export function inputSummary(input: unknown): string {
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const main = ["command", "path", "pattern"].map((key) => fields[key]).find((value) => typeof value === "string");
  const text = typeof main === "string" ? main : (JSON.stringify(input) ?? "");
  return text.length <= INPUT_SUMMARY_MAX ? text : `${text.slice(0, INPUT_SUMMARY_MAX - 1)}…`;
}

/** The first stream-json line: what is about to run, before any model call. */
export function initJson(info: RunInfo, version: string) {
  return {
    type: "system",
    subtype: "init",
    agent: info.agent,
    model: info.model,
    permission_mode: info.permissionMode,
    ...(info.sandbox !== undefined ? { sandbox: info.sandbox } : {}),
    session_id: info.sessionId,
    idempotency_key: info.idempotencyKey,
    workspace: info.workspace,
    state_dir: info.stateDir,
    ...(info.mcpServers ? { mcp_servers: info.mcpServers } : {}),
    version,
  };
}

/** A RunEvent or TeamEvent as one stream-json object: the same fields, snake_case keys. */
export function eventJson(event: RunEvent | TeamEvent): Record<string, unknown> {
  return Object.fromEntries(Object.entries(event).map(([key, value]) => [snakeCase(key), value]));
}

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
