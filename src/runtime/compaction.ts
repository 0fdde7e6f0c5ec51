import { join } from "node:path";
import type { ChatMessage, ModelClient, Usage } from "../model/types.ts";
import { ensureDir, writeFileAtomic } from "../storage/atomic-file.ts";
import { messageSize, sizeOf } from "./history-size.ts";

export interface CompactionOptions {
  /** Compact once the history passes this many characters. */
  thresholdChars: number;
  /** Tool results longer than this are saved to a file and replaced by a pointer and a preview. */
  largeToolResultChars: number;
  /** Where large tool results go: `<state-dir>/tool-results/<agent>/`. */
  resultsDir: string;
}

export const DEFAULT_COMPACTION = { thresholdChars: 400_000, largeToolResultChars: 40_000 } as const;

/** Characters a token stands for, on the low side: code and JSON tokenise denser than prose. */
const CHARS_PER_TOKEN = 3;

/**
 * The compaction threshold for a model whose context window is known (the
 * model catalogue): the window less room for the answer (its output limit, at
 * most a quarter of the window), in characters.
 */
export function thresholdForWindow(contextWindow: number, maxOutputTokens: number): number {
  const reserve = Math.min(maxOutputTokens, Math.floor(contextWindow / 4));
  return Math.floor((contextWindow - reserve) * CHARS_PER_TOKEN);
}

const PREVIEW_CHARS = 2_000;

export const SUMMARY_PREFIX = "[Summary of the earlier conversation, written when it was compacted]\n";

const SUMMARY_INSTRUCTIONS =
  "Summarise the conversation above for your own later use. Keep: the user's goals and constraints, " +
  "decisions made and why, files created or changed, commands that matter and their outcome, and " +
  "what is still open. Be concise and factual; do not address the user.";

/**
 * Indices where the history may be cut so that the kept tail starts cleanly:
 * not on a tool result, and with every tool call before the cut answered before
 * it — so no call loses its result, and no result its call.
 */
export function safeCutPoints(messages: readonly ChatMessage[]): number[] {
  const points: number[] = [];
  const open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (open.size === 0 && message.role !== "tool" && index > 0) points.push(index);
    if (message.role === "assistant") for (const call of message.toolCalls ?? []) open.add(call.id);
    if (message.role === "tool") open.delete(message.toolCallId);
  }
  return points;
}

/** Replaces tool results above the size limit by a pointer to a file holding them whole. */
export function persistLargeToolResults(
  messages: readonly ChatMessage[],
  options: CompactionOptions,
): { messages: ChatMessage[]; persisted: number } {
  let persisted = 0;
  const out = messages.map((message) => {
    if (message.role !== "tool" || message.content.length <= options.largeToolResultChars) return message;
    if (message.content.startsWith("[tool result saved to ")) return message;
    ensureDir(options.resultsDir);
    const file = join(options.resultsDir, `${safeFileName(message.toolCallId)}.txt`);
    writeFileAtomic(file, message.content);
    persisted += 1;
    return {
      ...message,
      content:
        `[tool result saved to ${file} (${message.content.length} characters); read it with read_file or shell if needed. ` +
        `First ${PREVIEW_CHARS} characters:]\n${message.content.slice(0, PREVIEW_CHARS)}`,
    };
  });
  return { messages: out, persisted };
}

function safeFileName(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100) || "result";
}

export interface Compacted {
  messages: ChatMessage[];
  summarisedMessages: number;
  persistedResults: number;
  usage: Usage;
}

/**
 * Shrinks a history: large tool results go to files first; if that is not
 * enough (or `force`), the older part — up to a safe cut that keeps roughly the
 * newest quarter of the threshold — is summarised by the model into one message.
 * Returns undefined when nothing needed doing.
 */
export async function compact(
  history: readonly ChatMessage[],
  options: CompactionOptions,
  summarise: { model: ModelClient; identity: string; systemPrompt: string; signal?: AbortSignal },
  force = false,
  /** sizeOf(history), when the caller keeps it. */
  size = sizeOf(history),
): Promise<Compacted | undefined> {
  if (!force && size <= options.thresholdChars) return undefined;
  const { messages, persisted } = persistLargeToolResults(history, options);
  if (!force && sizeOf(messages) <= options.thresholdChars) {
    return { messages, summarisedMessages: 0, persistedResults: persisted, usage: { inputTokens: 0, outputTokens: 0 } };
  }
  const cut = chooseCut(messages, options.thresholdChars / 4);
  if (cut === undefined) {
    return persisted > 0
      ? { messages, summarisedMessages: 0, persistedResults: persisted, usage: { inputTokens: 0, outputTokens: 0 } }
      : undefined;
  }
  const older = messages.slice(0, cut);
  const response = await summarise.model.complete({
    identity: summarise.identity,
    messages: [
      { role: "system", content: summarise.systemPrompt },
      ...older,
      { role: "user", content: SUMMARY_INSTRUCTIONS },
    ],
    tools: [],
    signal: summarise.signal,
  });
  const summary: ChatMessage = { role: "user", content: `${SUMMARY_PREFIX}${response.message.content ?? ""}` };
  return {
    messages: [summary, ...messages.slice(cut)],
    summarisedMessages: older.length,
    persistedResults: persisted,
    usage: response.usage,
  };
}

/** The latest safe cut that still leaves at most `keepChars` after it (at least the last turn). */
function chooseCut(messages: readonly ChatMessage[], keepChars: number): number | undefined {
  const points = safeCutPoints(messages);
  if (points.length === 0) return undefined;
  // The size after each point, taken down as the points go: measuring each
  // tail anew was quadratic (25 s of CPU on a never-compacted 5 000-turn history).
  let after = sizeOf(messages);
  let measured = 0;
  for (const point of points) {
    for (; measured < point; measured += 1) after -= messageSize(messages[measured]!);
    if (after <= keepChars) return point;
  }
  return points.at(-1);
}
