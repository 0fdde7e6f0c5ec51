import type { AssistantMessage, ChatMessage, ToolSpec } from "../types.ts";

// Our history as an Anthropic Messages request: system text apart, tool results
// as `tool_result` blocks of a user turn, consecutive turns of one role merged
// (the API wants user and assistant to alternate), the thinking blocks an answer
// came with sent back in front of it, and prompt-cache breakpoints.

/** Where the thinking blocks of an Anthropic answer are kept in the history (the assistant message's `extra`). */
export const THINKING_EXTRA = "anthropic_thinking";

export type Block = Record<string, unknown>;
export interface Turn {
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

export const EPHEMERAL = { type: "ephemeral" } as const;
/** The least budget the API takes for thinking; below twice this cap thinking is left off. */
export const MIN_THINKING_BUDGET = 1024;

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
  for (const [turn, block] of cacheBreakpoints(turns)) turns[turn]!.content[block]!.cache_control = EPHEMERAL;
  const budget = thinkingBudget(options, turns);
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    // The system prompt (with the tools before it) is the longest stable prefix: a breakpoint of its own.
    ...(system.length > 0 ? { system: [{ type: "text", text: system.join("\n\n"), cache_control: EPHEMERAL }] } : {}),
    messages: turns,
    ...(options.tools.length > 0 ? { tools: options.tools.map(toAnthropicTool) } : {}),
    ...(budget !== undefined ? { thinking: { type: "enabled" as const, budget_tokens: budget } } : {}),
  };
}

export function toAnthropicTool(tool: ToolSpec): { name: string; description: string; input_schema: Record<string, unknown> } {
  return { name: tool.name, description: tool.description, input_schema: tool.parameters };
}

/** A turn as far as the request's rules look at it: its role and its blocks' types. */
export interface TurnShape<B extends { type?: unknown }> {
  role: Turn["role"];
  content: readonly B[];
}

/** The thinking budget to ask for, or none: not asked, no room under the cap, or a tool loop whose answer did not think. */
export function thinkingBudget(options: Pick<AnthropicRequestOptions, "thinking" | "maxTokens">, turns: ReadonlyArray<TurnShape<{ type?: unknown }>>): number | undefined {
  const budget = Math.min(Math.floor(options.maxTokens / 2), 16_000);
  return options.thinking && budget >= MIN_THINKING_BUDGET && !unthoughtToolLoop(turns) ? budget : undefined;
}

function toTurns(messages: ChatMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    const part = turnPart(message);
    if (part === undefined) continue;
    const last = turns.at(-1);
    if (last?.role === part.role) last.content.push(...part.blocks);
    else turns.push({ role: part.role, content: part.blocks });
  }
  return turns;
}

/**
 * What one message of our history adds to the turns: its blocks and the role of
 * the turn they join (a tool result is the user's). None for a system message,
 * which goes in `system`. At least one block; new block objects each call, but a
 * thinking block's, which is the history's own.
 */
export function turnPart(message: ChatMessage): { role: Turn["role"]; blocks: Block[] } | undefined {
  switch (message.role) {
    case "system":
      return undefined;
    case "user":
      return { role: "user", blocks: [{ type: "text", text: message.content || "(empty)" }] };
    case "tool":
      return {
        role: "user",
        blocks: [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            ...(message.content !== "" ? { content: message.content } : {}),
            ...(message.isError ? { is_error: true } : {}),
          },
        ],
      };
    case "assistant":
      return { role: "assistant", blocks: assistantBlocks(message) };
  }
}

function assistantBlocks(message: AssistantMessage): Block[] {
  const thinking = message.extra?.[THINKING_EXTRA];
  const blocks: Block[] = Array.isArray(thinking) ? thinking.filter((block): block is Block => typeof block === "object" && block !== null) : [];
  if (message.content) blocks.push({ type: "text", text: message.content });
  for (const call of message.toolCalls ?? []) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) });
  // An answer with nothing the API takes back (only thinking cut short, say): a placeholder keeps the turns alternating.
  if (blocks.every(isThinking)) blocks.push({ type: "text", text: "(no answer)" });
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
 * Where the cache breakpoints go (turn and block): the newest turn's last (the next
 * request's prefix ends there, so it reads what this one writes) and that of
 * the turn before the last answer (the end of the previous request: what this
 * one reads from the cache). With the system prompt's, three of the four the
 * API allows. Never a thinking block, which cannot carry one.
 */
export function cacheBreakpoints(turns: ReadonlyArray<TurnShape<{ type?: unknown }>>): Array<[turn: number, block: number]> {
  const lastAnswer = turns.findLastIndex((turn) => turn.role === "assistant");
  const marked = new Set([turns.length - 1, lastAnswer - 1].filter((index) => index >= 0));
  const at: Array<[number, number]> = [];
  for (const turn of marked) {
    const block = turns[turn]!.content.findLastIndex((block) => !isThinking(block));
    if (block >= 0) at.push([turn, block]);
  }
  return at;
}

function isThinking(block: { type?: unknown }): boolean {
  return block.type === "thinking" || block.type === "redacted_thinking";
}

/**
 * The request continues a tool loop whose last answer has no thinking block (it
 * came from another model, or from a request without thinking): the API refuses
 * thinking there, so this request goes without.
 */
function unthoughtToolLoop(turns: ReadonlyArray<TurnShape<{ type?: unknown }>>): boolean {
  const last = turns.at(-1);
  const answer = turns.at(-2);
  if (last?.role !== "user" || answer?.role !== "assistant") return false;
  if (!last.content.some((block) => block.type === "tool_result")) return false;
  const first = answer.content[0];
  return first === undefined || !isThinking(first);
}
