import type { ChatMessage } from "../model/types.ts";

/** A history's size as compaction measures it: characters of content, tool calls and what rides with them. */
export function sizeOf(messages: readonly ChatMessage[]): number {
  let size = 0;
  for (const message of messages) size += messageSize(message);
  return size;
}

/** One message's share of sizeOf: a history keeps the sum as it grows (HistoryStore.size). */
export function messageSize(message: ChatMessage): number {
  let size = message.content?.length ?? 0;
  if (message.role !== "assistant") return size;
  // What the endpoint sent beside the answer (a thinking model's reasoning) may be sent back with it.
  if (message.extra) size += JSON.stringify(message.extra).length;
  for (const call of message.toolCalls ?? []) size += call.arguments.length + call.name.length + (call.extra ? JSON.stringify(call.extra).length : 0);
  return size;
}
