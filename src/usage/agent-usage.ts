import { costUsd, roundUsd } from "./cost.ts";
import type { Pricing } from "./pricing.ts";
import type { ModelCallRecord, UsageRecord } from "./usage-record.ts";

/** One agent's (or a whole run's) usage, added up from its records. */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
  /** Undefined when no call reported cached tokens. */
  cachedInputTokens?: number;
  modelCalls: number;
  toolCalls: number;
  /** Wall time spent in turns. */
  busyMs: number;
  /** Wall time spent waiting for model answers (claude -p's duration_api_ms). */
  apiMs: number;
  /** Undefined when a call's model has no price. */
  costUsd?: number;
}

export interface UsageReport {
  total: AgentUsage;
  byAgent: Record<string, AgentUsage>;
}

const empty = (): AgentUsage & { priced: boolean } => ({ inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0, busyMs: 0, apiMs: 0, costUsd: 0, priced: true });

/**
 * Adds the records up per agent and in total. A cost is given only when every
 * model call in the sum has a price in `pricing`.
 */
export function summarise(records: Iterable<UsageRecord>, pricing: Pricing): UsageReport {
  const total = empty();
  const byAgent = new Map<string, ReturnType<typeof empty>>();
  for (const record of records) {
    let agent = byAgent.get(record.agent);
    if (!agent) byAgent.set(record.agent, (agent = empty()));
    for (const sum of [agent, total]) {
      if (record.type === "turn") {
        sum.busyMs += record.duration_ms;
        continue;
      }
      sum.inputTokens += record.input_tokens;
      sum.outputTokens += record.output_tokens;
      if (record.cached_input_tokens !== undefined) sum.cachedInputTokens = (sum.cachedInputTokens ?? 0) + record.cached_input_tokens;
      sum.modelCalls += 1;
      sum.apiMs += record.duration_ms;
      sum.toolCalls += record.tool_calls;
      const cost = callCost(record, pricing);
      if (cost === undefined) sum.priced = false;
      else sum.costUsd = (sum.costUsd ?? 0) + cost;
    }
  }
  const finish = ({ priced, ...usage }: ReturnType<typeof empty>): AgentUsage => {
    if (!priced) delete usage.costUsd;
    else usage.costUsd = roundUsd(usage.costUsd ?? 0);
    return usage;
  };
  return { total: finish(total), byAgent: Object.fromEntries([...byAgent].map(([name, usage]) => [name, finish(usage)])) };
}

/** What one recorded model call cost at `pricing`; undefined when its model has no price. */
export function callCost(record: ModelCallRecord, pricing: Pricing): number | undefined {
  return costUsd(pricing, record.model, {
    inputTokens: record.input_tokens,
    outputTokens: record.output_tokens,
    ...(record.cached_input_tokens !== undefined ? { cachedInputTokens: record.cached_input_tokens } : {}),
    ...(record.cache_write_input_tokens !== undefined ? { cacheWriteInputTokens: record.cache_write_input_tokens } : {}),
  });
}

/** An AgentUsage as JSON output shows it (snake_case; absent figures left out). */
export function usageJson(usage: AgentUsage) {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    ...(usage.cachedInputTokens !== undefined ? { cached_input_tokens: usage.cachedInputTokens } : {}),
    model_calls: usage.modelCalls,
    tool_calls: usage.toolCalls,
    busy_ms: usage.busyMs,
    ...(usage.costUsd !== undefined ? { cost_usd: usage.costUsd } : {}),
  };
}

/** `usage`, `usage_by_agent` and `total_cost_usd` (when priced) of a result. */
export function reportJson(report: UsageReport) {
  const { costUsd: total, ...usage } = report.total;
  return {
    usage: usageJson(usage),
    usage_by_agent: Object.fromEntries(Object.entries(report.byAgent).map(([name, agent]) => [name, usageJson(agent)])),
    ...(total !== undefined ? { total_cost_usd: total } : {}),
  };
}
