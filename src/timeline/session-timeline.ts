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
  const placed: Placed[] = [];
  const byAgent = new Map<string, { own: Placed[]; next: number }>();
  const carried = await histories.carriedUsage();
  for (const agent of await histories.agents()) {
    const own: Placed[] = [];
    for (const [record, history] of (await histories.read(agent)).entries()) {
      for (const entry of historyEntries(agent, history)) own.push({ entry, index: placed.length + own.length, record });
    }
    placed.push(...own);
    byAgent.set(agent, { own, next: 0 });
  }
  for (const record of readSessionRecords(stateDir, carried)) {
    if (record.type !== "model_call") continue;
    const agent = byAgent.get(record.agent) ?? { own: [], next: 0 };
    placed.push({ entry: modelCallEntry(record), index: callIndex(agent, record, placed.length), record: -1 });
  }
  // Stable: what one agent wrote at the same millisecond keeps its order.
  return placed.sort((a, b) => a.entry.at.localeCompare(b.entry.at) || a.index - b.index).map(({ entry }) => entry);
}

/** An entry with where it sorts among those of its millisecond, and which history record it is from. */
interface Placed {
  entry: TimelineEntry;
  index: number;
  record: number;
}

/**
 * Where a model call goes among its agent's entries (in the order its history
 * has them): a call and its answer often share a millisecond, and the usage
 * records are read after the histories, so time alone listed the answer first.
 * The agent's own calls are taken in order, each just before the first answer
 * (the assistant's text or tool calls, a compaction) not yet given to an
 * earlier call and not before the call's millisecond; a subagent's call (billed
 * to the agent, answered in no history) just before the first entry after its
 * millisecond.
 */
function callIndex(agent: { own: Placed[]; next: number }, call: { at: string; agent: string; identity: string }, otherwise: number): number {
  const { own } = agent;
  // A history is written in time order: the first entry not before the call, by halving.
  let low = 0;
  let high = own.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (own[middle]!.entry.at < call.at) low = middle + 1;
    else high = middle;
  }
  if (call.identity !== call.agent) {
    while (low < own.length && own[low]!.entry.at === call.at) low += 1;
    return low < own.length ? own[low]!.index - 0.5 : otherwise;
  }
  let at = Math.max(low, agent.next);
  while (at < own.length && own[at]!.entry.at === call.at && !isAnswer(own[at]!.entry)) at += 1;
  if (at >= own.length) return otherwise;
  if (isAnswer(own[at]!.entry)) {
    // Its answer is taken: every entry of that record (a text and its tool calls).
    let next = at;
    while (next < own.length && own[next]!.record === own[at]!.record) next += 1;
    agent.next = next;
  }
  return own[at]!.index - 0.5;
}

function isAnswer(entry: TimelineEntry): boolean {
  return entry.kind === "assistant" || entry.kind === "tool_call" || entry.kind === "compaction";
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
