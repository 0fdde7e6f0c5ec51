import type { AssistantMessage, ChatMessage, ToolSpec } from "../types.ts";

// Our history as a Responses API request, stateless: every request carries the
// whole conversation as input items (`store: false`, no previous_response_id),
// and the reasoning items an answer came with go back in front of it, their
// encrypted content being what lets the model pick up its reasoning again.

/** Where the reasoning items of a Responses answer are kept in the history (the assistant message's `extra`). */
export const REASONING_EXTRA = "openai_reasoning";

type Item = Record<string, unknown>;

export interface ResponsesRequest {
  model: string;
  input: Item[];
  tools?: Array<{ type: "function"; name: string; description: string; parameters: Record<string, unknown>; strict: false }>;
  store: false;
  include?: string[];
  max_output_tokens?: number;
}

export interface ResponsesRequestOptions {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens?: number;
  /** Ask for reasoning items' encrypted content (reasoning models take it; others refuse it). */
  encryptedReasoning: boolean;
}

export function toResponsesRequest(options: ResponsesRequestOptions): ResponsesRequest {
  return {
    model: options.model,
    input: options.messages.flatMap(toItems),
    ...(options.tools.length > 0 ? { tools: options.tools.map(toResponsesTool) } : {}),
    store: false,
    ...(options.encryptedReasoning ? { include: ["reasoning.encrypted_content"] } : {}),
    ...(options.maxTokens !== undefined ? { max_output_tokens: options.maxTokens } : {}),
  };
}

export function toResponsesTool(tool: ToolSpec): { type: "function"; name: string; description: string; parameters: Record<string, unknown>; strict: false } {
  // Our schemas are not written for strict mode (optional fields, open objects).
  return { type: "function", name: tool.name, description: tool.description, parameters: tool.parameters, strict: false };
}

/** A message of our history as the input items it becomes (none for an answer with nothing to send back). */
export function toItems(message: ChatMessage): Item[] {
  switch (message.role) {
    case "system":
      return [{ role: "developer", content: message.content }];
    case "user":
      return [{ role: "user", content: message.content }];
    case "tool":
      return [{ type: "function_call_output", call_id: message.toolCallId, output: message.content }];
    case "assistant":
      return assistantItems(message);
  }
}

function assistantItems(message: AssistantMessage): Item[] {
  const kept = message.extra?.[REASONING_EXTRA];
  // Without its encrypted content a reasoning item names one stored server-side, and nothing is stored (store: false).
  const reasoning = Array.isArray(kept)
    ? kept.filter((item): item is Item => typeof item === "object" && item !== null && typeof (item as Item).encrypted_content === "string")
    : [];
  return [
    ...reasoning,
    ...(message.content ? [{ role: "assistant", content: message.content }] : []),
    ...(message.toolCalls ?? []).map((call) => ({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments })),
  ];
}
