import type { AttachmentStore } from "../attachments/attachment-store.ts";
import { attachWithPreview } from "../attachments/attachment-text.ts";
import type { ChatMessage, ModelClient, Usage } from "../model/types.ts";
import { messageSize, sizeOf } from "./history-size.ts";

export interface CompactionOptions {
  /** Compact once the history passes this many characters. */
  thresholdChars: number;
  /** Tool results longer than this are saved whole and replaced by a preview and a note saying how to read on. */
  largeToolResultChars: number;
  /**
   * Where large tool results are saved: the session's attachments, which the
   * model reads on in with read_attachment. Not files it would open itself: the
   * state is closed to the file tools and hidden from the sandbox.
   */
  results: AttachmentStore;
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

/** How much of a saved tool result stays in the history. */
const KEPT_PREVIEW_BYTES = 2_000;

/** How a saved result's note starts: such a result is never saved again (nor one saved to a file by earlier builds). */
const SAVED_NOTE = "[tool result saved";

/**
 * The tool that reads a saved result: what it returned is what the model asked
 * to see, and saving it again would hand the model another note in its place
 * (a loop under a limit below read_attachment's 32 KiB).
 */
const READS_SAVED = "read_attachment";

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

/** Replaces tool results above the size limit by a preview and a note naming the attachment that holds them whole. */
export async function persistLargeToolResults(
  messages: readonly ChatMessage[],
  options: CompactionOptions,
): Promise<{ messages: ChatMessage[]; persisted: number }> {
  let persisted = 0;
  const readsOfSaved = new Set<string>();
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.toolCalls ?? []) if (call.name === READS_SAVED) readsOfSaved.add(call.id);
    const keep = message.role !== "tool" || message.content.length <= options.largeToolResultChars || readsOfSaved.has(message.toolCallId);
    if (keep || message.content.startsWith(SAVED_NOTE)) {
      out.push(message);
      continue;
    }
    // Durable before the snapshot that drops the content is written.
    const { id, size, preview, kept } = await attachWithPreview(message.content, KEPT_PREVIEW_BYTES, options.results);
    persisted += 1;
    const note =
      `${SAVED_NOTE} as attachment ${id} (${size} bytes); its first ${kept} bytes follow. ` +
      `Read the rest with read_attachment, id "${id}", offset ${kept}]`;
    out.push({ ...message, content: `${note}\n${preview}` });
  }
  return { messages: out, persisted };
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
  const { messages, persisted } = await persistLargeToolResults(history, options);
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
