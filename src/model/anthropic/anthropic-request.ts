import type { AssistantMessage, ChatMessage, ToolCall, ToolSpec } from "../types.ts";
import { assistantTurnStart, isThinkingBlock } from "./assistant-turn.ts";
import { MAX_CACHE_BREAKPOINTS } from "./request-rules.ts";

// Our history as an Anthropic Messages request: system text apart, tool results
// as `tool_result` blocks of a user turn, consecutive turns of one role merged
// (the API wants user and assistant to alternate), the thinking blocks an answer
// came with sent back where they were, and prompt-cache breakpoints. The API's
// rules beyond the types are request-rules.ts; this file keeps them.

/** Where the thinking blocks of an Anthropic answer are kept in the history (the assistant message's `extra`). */
export const THINKING_EXTRA = "anthropic_thinking";
/**
 * Where an answer whose blocks came in another order than thinking, text, tool
 * calls (interleaved thinking: thinking, call, thinking, call) keeps that order:
 * "thinking" and "tool_use" for the next of each, a number for the next that
 * many characters of the text. The API refuses the answer rebuilt otherwise.
 */
export const ORDER_EXTRA = "anthropic_order";

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
  thinking?: ThinkingParam;
  stream?: boolean;
}

export const EPHEMERAL = { type: "ephemeral" } as const;
/** The least budget the API takes for thinking; below twice this cap thinking is left off. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Extended thinking as a request asks for it: a budget (`enabled`, the form up
 * to Claude Opus 4.6 / Sonnet 4.6), or `adaptive`, where the model decides how
 * much to think (the only form Claude Opus 4.7, Sonnet 5 and later take).
 */
export type ThinkingParam = { type: "enabled"; budget_tokens: number } | { type: "adaptive" };

export interface AnthropicRequestOptions {
  model: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Ask for extended thinking (a model that reasons, with room under the cap). */
  thinking: boolean;
  /** In the adaptive form (the catalogue's `thinking: "adaptive"`), not with a budget. */
  adaptive?: boolean;
}

export function toAnthropicRequest(options: AnthropicRequestOptions): AnthropicRequest {
  const system = options.messages.filter((message) => message.role === "system").map((message) => message.content);
  const turns = toTurns(options.messages);
  const { thinking, unthinkFrom } = thinkingPlan(options, turns);
  for (const turn of turnsToUnthink(turns, unthinkFrom)) turn.content = turn.content.filter((block) => !isThinkingBlock(block));
  for (const [turn, block] of cacheBreakpoints(turns)) turns[turn]!.content[block]!.cache_control = EPHEMERAL;
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    // The system prompt (with the tools before it) is the longest stable prefix: a breakpoint of its own.
    ...(system.length > 0 ? { system: [{ type: "text", text: system.join("\n\n"), cache_control: EPHEMERAL }] } : {}),
    messages: turns,
    ...(options.tools.length > 0 ? { tools: options.tools.map(toAnthropicTool) } : {}),
    ...(thinking !== undefined ? { thinking } : {}),
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

export interface ThinkingPlan {
  /** The request's `thinking`; none for a request without thinking. */
  thinking?: ThinkingParam;
  /** Without thinking, the assistant turns from this one on go without their thinking blocks. */
  unthinkFrom?: number;
}

/**
 * One thinking setting for the whole assistant turn a request continues (see
 * assistant-turn.ts): on when the model thinks, there is room under the cap and
 * the turn began with a thinking block (Claude writes none after a tool result,
 * so a later answer having none says nothing); off otherwise — and then the
 * turn's answers go without thinking blocks, which the API refuses with thinking off.
 */
export function thinkingPlan(options: Pick<AnthropicRequestOptions, "thinking" | "maxTokens" | "adaptive">, turns: ReadonlyArray<TurnShape<{ type?: unknown }>>): ThinkingPlan {
  // Adaptive thinking needs no budget, and the model may well answer a turn without thinking: the form stays.
  if (options.thinking && options.adaptive) return { thinking: { type: "adaptive" } };
  const budget = Math.min(Math.floor(options.maxTokens / 2), 16_000);
  const start = assistantTurnStart(turns);
  const began = start === undefined || isThinkingBlock(turns[start]!.content[0]);
  if (options.thinking && budget >= MIN_THINKING_BUDGET && began) return { thinking: { type: "enabled", budget_tokens: budget } };
  return start === undefined ? {} : { unthinkFrom: start };
}

/** The assistant turns a plan without thinking takes the thinking blocks out of. */
export function turnsToUnthink<T extends TurnShape<{ type?: unknown }>>(turns: readonly T[], from: number | undefined): T[] {
  return from === undefined ? [] : turns.slice(from).filter((turn) => turn.role === "assistant");
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
    case "user": {
      const text = message.content;
      // The API refuses a blank text block.
      return { role: "user", blocks: [{ type: "text", text: text.trim() === "" ? "(empty)" : text }] };
    }
    case "tool": {
      const text = message.content;
      return {
        role: "user",
        blocks: [
          {
            type: "tool_result",
            tool_use_id: message.toolCallId,
            ...(text.trim() !== "" ? { content: text } : {}),
            ...(message.isError ? { is_error: true } : {}),
          },
        ],
      };
    }
    case "assistant":
      return { role: "assistant", blocks: assistantBlocks(message) };
  }
}

function assistantBlocks(message: AssistantMessage): Block[] {
  const kept = message.extra?.[THINKING_EXTRA];
  const thinking: Block[] = Array.isArray(kept) ? kept.filter((block): block is Block => typeof block === "object" && block !== null) : [];
  const calls = message.toolCalls ?? [];
  const text = message.content ?? "";
  const blocks = inOrder(message.extra?.[ORDER_EXTRA], thinking, text, calls) ?? [...thinking, ...textBlock(text), ...calls.map(toolUse)];
  // An answer with nothing the API takes back (only thinking cut short, say): a placeholder keeps the turns alternating.
  if (blocks.every(isThinkingBlock)) blocks.push({ type: "text", text: "(no answer)" });
  return blocks;
}

/**
 * The answer's blocks in the order it gave them (ORDER_EXTRA); none when it kept
 * no order, or one that does not fit what the history holds now (its text masked
 * to another length, say): then the usual order.
 */
function inOrder(order: unknown, thinking: Block[], text: string, calls: ToolCall[]): Block[] | undefined {
  if (!Array.isArray(order)) return undefined;
  const count = (kind: string) => order.filter((entry) => entry === kind).length;
  const lengths = order.filter((entry): entry is number => typeof entry === "number");
  if (count("thinking") !== thinking.length || count("tool_use") !== calls.length || lengths.reduce((a, b) => a + b, 0) !== text.length) return undefined;
  const blocks: Block[] = [];
  let [t, c, at] = [0, 0, 0];
  for (const entry of order) {
    if (entry === "thinking") blocks.push(thinking[t++]!);
    else if (entry === "tool_use") blocks.push(toolUse(calls[c++]!));
    else if (typeof entry === "number") {
      blocks.push(...textBlock(text.slice(at, at + entry)));
      at += entry;
    }
  }
  return blocks;
}

/** A text block, or none for blank text: the API refuses a whitespace-only one ("\n\n" before a call, say). */
function textBlock(text: string): Block[] {
  return text.trim() === "" ? [] : [{ type: "text", text }];
}

function toolUse(call: ToolCall): Block {
  return { type: "tool_use", id: call.id, name: call.name, input: toolInput(call.arguments) };
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
    const block = turns[turn]!.content.findLastIndex((block) => !isThinkingBlock(block));
    if (block >= 0) at.push([turn, block]);
  }
  // Never past the API's limit, the system prompt's own counted.
  return at.slice(0, MAX_CACHE_BREAKPOINTS - 1);
}
