import type { AssistantMessage, ChatMessage, ToolSpec } from "../types.ts";

// Our history as an Anthropic Messages request: system text apart, tool results
// as `tool_result` blocks of a user turn, consecutive turns of one role merged
// (the API wants user and assistant to alternate), the thinking blocks an answer
// came with sent back in front of it, and prompt-cache breakpoints.

/** Where the thinking blocks of an Anthropic answer are kept in the history (the assistant message's `extra`). */
export const THINKING_EXTRA = "anthropic_thinking";

type Block = Record<string, unknown>;
interface Turn {
  role: "user" | "assistant";
  content: Block[];
}

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: Block[];
  messages: Turn[];
  tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
  thinking?: { type: "enabled"; budget_tokens: number };
  stream?: boolean;
}

const EPHEMERAL = { type: "ephemeral" } as const;
/** The least budget the API takes for thinking; below twice this cap thinking is left off. */
const MIN_THINKING_BUDGET = 1024;

export interface AnthropicRequestOptions {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Ask for extended thinking (a model that reasons, with room under the cap). */
  thinking: boolean;
}

export function toAnthropicRequest(options: AnthropicRequestOptions): AnthropicRequest {
  const system = options.messages.filter((message) => message.role === "system").map((message) => message.content);
  const turns = toTurns(options.messages);
  markCacheBreakpoints(turns);
  const budget = Math.min(Math.floor(options.maxTokens / 2), 16_000);
  const thinking = options.thinking && budget >= MIN_THINKING_BUDGET && !unthoughtToolLoop(turns);
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    // The system prompt (with the tools before it) is the longest stable prefix: a breakpoint of its own.
    ...(system.length > 0 ? { system: [{ type: "text", text: system.join("\n\n"), cache_control: EPHEMERAL }] } : {}),
    messages: turns,
    ...(options.tools.length > 0
      ? { tools: options.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })) }
      : {}),
    ...(thinking ? { thinking: { type: "enabled" as const, budget_tokens: budget } } : {}),
  };
}

function toTurns(messages: ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  const add = (role: Turn["role"], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        add("user", [{ type: "text", text: message.content || "(empty)" }]);
        break;
      case "tool":
        add("user", [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            ...(message.content !== "" ? { content: message.content } : {}),
            ...(message.isError ? { is_error: true } : {}),
          },
        ]);
        break;
      case "assistant":
        add("assistant", assistantBlocks(message));
        break;
    }
  }
  return turns;
}

function assistantBlocks(message: AssistantMessage): Block[] {
  const thinking = message.extra?.[THINKING_EXTRA];
  const blocks: Block[] = Array.isArray(thinking) ? thinking.filter((block): block is Block => typeof block === "object" && block !== null) : [];
  if (message.content) blocks.push({ type: "text", text: message.content });
  for (const call of message.toolCalls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
  // An answer with nothing the API takes back (only thinking cut short, say): a placeholder keeps the turns alternating.
  if (!blocks.some((block) => block.type !== "thinking" && block.type !== "redacted_thinking")) blocks.push({ type: "text", text: "(no answer)" });
  return blocks;
}

/** The call's arguments as the object `tool_use` holds; malformed JSON (already reported to the model) as an empty one. */
function toolInput(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Cache breakpoints on the newest turn (the next request's prefix ends there,
 * so it reads what this one writes) and on the turn before the last answer (the
 * end of the previous request: what this one reads from the cache). With the
 * system prompt's, three of the four the API allows. Never on a thinking block,
 * which cannot carry one.
 */
function markCacheBreakpoints(turns: Turn[]): void {
  const lastAnswer = turns.findLastIndex((turn) => turn.role === "assistant");
  const marked = new Set([turns.length - 1, lastAnswer - 1].filter((index) => index >= 0));
  for (const index of marked) {
    const block = turns[index]!.content.findLast((block) => block.type !== "thinking" && block.type !== "redacted_thinking");
    if (block) block.cache_control = EPHEMERAL;
  }
}

/**
 * The request continues a tool loop whose last answer has no thinking block (it
 * came from another model, or from a request without thinking): the API refuses
 * thinking there, so this request goes without.
 */
function unthoughtToolLoop(turns: Turn[]): boolean {
  const last = turns.at(-1);
  const answer = turns.at(-2);
  if (last?.role !== "user" || answer?.role !== "assistant") return false;
  if (!last.content.some((block) => block.type === "tool_result")) return false;
  const first = answer.content[0];
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}
