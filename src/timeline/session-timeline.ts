import type { HistoryBackend, HistoryRecord } from "../runtime/history-store.ts";
import { FileHistoryBackend } from "../runtime/file-history.ts";
import type { ChatMessage } from "../model/types.ts";
import { readSessionRecords } from "../usage/usage-ledger.ts";
import type { UsageRecord } from "../usage/usage-record.ts";

export const TIMELINE_KINDS = ["turn", "user", "event", "assistant", "tool_call", "tool_result", "compaction", "model_call"] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** One thing an agent did or was told, when. `text` is the whole content; the printer clips it. */
export interface TimelineEntry {
  at: string;
  agent: string;
  kind: TimelineKind;
  text: string;
  /** The turn's key, the tool call's id, the event's sender…: what the entry is about. */
  detail?: Record<string, unknown>;
}

/**
 * A session's turns, messages and tool calls in time order, read from its
 * histories (in whichever store holds them: `agents/<name>.jsonl` or the
 * PostgreSQL store's rows) and its usage ledger (in the state dir) — no tracing
 * needed. Read only: nothing is repaired or created, so it is safe beside a
 * live runtime.
 */
export async function sessionTimeline(stateDir: string, histories: HistoryReader = new FileHistoryBackend(stateDir)): Promise<TimelineEntry[]> {
  const entries: TimelineEntry[] = [];
  const carried = await histories.carriedUsage();
  for (const agent of await histories.agents()) {
    for (const record of await histories.read(agent)) entries.push(...historyEntries(agent, record));
  }
  for (const record of readSessionRecords(stateDir, carried)) {
    if (record.type === "model_call") entries.push(modelCallEntry(record));
  }
  // Stable: what one agent wrote at the same millisecond keeps its order.
  return entries.map((entry, index) => ({ entry, index })).sort((a, b) => a.entry.at.localeCompare(b.entry.at) || a.index - b.index).map(({ entry }) => entry);
}

/** What the timeline reads of a session's histories. */
export type HistoryReader = Pick<HistoryBackend, "agents" | "read" | "carriedUsage">;

/** What one history record says, as timeline entries (none for a system message). */
export function historyEntries(agent: string, record: HistoryRecord): TimelineEntry[] {
  const at = record.at;
  if (record.type === "turn") {
    const text = record.status === "finished" ? `turn finished (${record.subtype ?? "success"})${record.result ? `: ${record.result}` : ""}` : `turn ${record.status}`;
    return [{ at, agent, kind: "turn", text, detail: { key: record.key, status: record.status, ...(record.subtype ? { subtype: record.subtype } : {}) } }];
  }
  if (record.type === "snapshot") {
    return [{ at, agent, kind: "compaction", text: `history compacted to ${record.messages.length} messages` }];
  }
  // Its model calls are listed from the usage records, once (usage.jsonl has them too).
  if (record.type === "usage") return [];
  return messageEntries(agent, at, record.message);
}

function messageEntries(agent: string, at: string, message: ChatMessage): TimelineEntry[] {
  switch (message.role) {
    case "system":
      return [];
    case "user": {
      const event = parseEnvelope(message.content);
      if (event) return [{ at, agent, kind: "event", text: `${event.kind} from ${event.from}: ${event.content}`, detail: { from: event.from, event_kind: event.kind } }];
      return [{ at, agent, kind: "user", text: message.content }];
    }
    case "assistant":
      return [
        ...(message.content ? [{ at, agent, kind: "assistant" as const, text: message.content }] : []),
        ...(message.toolCalls ?? []).map((call) => ({
          at,
          agent,
          kind: "tool_call" as const,
          text: `${call.name} ${call.arguments}`,
          detail: { id: call.id, name: call.name },
        })),
      ];
    case "tool":
      return [
        {
          at,
          agent,
          kind: "tool_result",
          text: `${message.isError ? "error: " : ""}${message.content}`,
          detail: { id: message.toolCallId, ...(message.isError ? { is_error: true } : {}) },
        },
      ];
  }
}

function modelCallEntry(record: Extract<UsageRecord, { type: "model_call" }>): TimelineEntry {
  const cached = record.cached_input_tokens !== undefined ? ` (${record.cached_input_tokens} cached)` : "";
  const who = record.identity === record.agent ? "" : ` for ${record.identity}`;
  return {
    at: record.at,
    agent: record.agent,
    kind: "model_call",
    text: `model call${who}: ${record.input_tokens} in${cached}, ${record.output_tokens} out, ${record.tool_calls} tool call(s), ${record.duration_ms} ms`,
    detail: { model: record.model, identity: record.identity },
  };
}

/** The Lead's event envelope (src/core/runtime-event.ts), or undefined for a plain prompt. */
function parseEnvelope(content: string): { from: string; kind: string; content: string } | undefined {
  if (!content.startsWith('{"agent_event"')) return undefined;
  try {
    const parsed = JSON.parse(content) as { agent_event?: { from?: unknown; kind?: unknown }; content?: unknown };
    const { from, kind } = parsed.agent_event ?? {};
    if (typeof from !== "string" || typeof kind !== "string" || typeof parsed.content !== "string") return undefined;
    return { from, kind, content: parsed.content };
  } catch {
    return undefined;
  }
}

const TEXT_MAX = 160;

/** The timeline as aligned lines: time, agent, what happened (one line each, clipped). */
export function formatTimeline(entries: TimelineEntry[]): string {
  const width = Math.max(5, ...entries.map((entry) => entry.agent.length));
  return entries
    .map((entry) => {
      const flat = entry.text.replace(/\s*\r?\n\s*/g, " ⏎ ");
      const text = flat.length <= TEXT_MAX ? flat : `${flat.slice(0, TEXT_MAX - 1)}…`;
      return `${entry.at}  ${entry.agent.padEnd(width)}  ${entry.kind.padEnd(11)}  ${text}\n`;
    })
    .join("");
}
