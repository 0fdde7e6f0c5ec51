import { assistantTurnStart, isThinkingBlock } from "./assistant-turn.ts";

/**
 * The rules the Messages API enforces beyond its request types, as data: each
 * with the message of the HTTP 400 it answers a breach with (the words as the
 * API's `invalid_request_error` bodies quote them in public issue threads).
 * Shared by the adapter's tests, which run every request they build through
 * them, and by the strict mock server (test/support/anthropic-strict.ts),
 * which answers a breach as the API does. The adapter itself keeps them by
 * construction (anthropic-request.ts), and takes its limits from here.
 */

/** Blocks with `cache_control` a request may hold, system and tools included. */
export const MAX_CACHE_BREAKPOINTS = 4;

type Json = Record<string, unknown>;

/** A request body as the rules read it: anything JSON, checked field by field. */
export interface RuleRequest {
  max_tokens?: unknown;
  system?: unknown;
  messages?: unknown;
  tools?: unknown;
  thinking?: unknown;
}

interface Message {
  role: string;
  content: Json[];
}

/**
 * What only the server knows: the answers it gave. A thinking block is the
 * API's own, checked by its signature; one not given out, or changed, is refused.
 */
export interface RuleContext {
  /** Whether this thinking or redacted_thinking block is one an answer carried, unchanged. */
  issued(block: Json): boolean;
  /**
   * The blocks of the answer this assistant message came from, as sent; none
   * when the message holds nothing the server recognises.
   */
  answerOf(message: readonly Json[]): readonly Json[] | undefined;
}

export interface RequestRule {
  /** A stable name: what tests and the strict mock's report call it. */
  name: string;
  /** The 400's message; `{at}` and the other `{…}` are filled from what `find` returns. */
  says: string;
  /** Where the request breaks the rule, with what the message names; undefined when it keeps it. */
  find(request: RuleRequest, messages: Message[], context: RuleContext | undefined): Record<string, string> | undefined;
}

const DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

export const ANTHROPIC_REQUEST_RULES: readonly RequestRule[] = [
  {
    name: "max-tokens-required",
    says: "max_tokens: Field required",
    find: (request) => (typeof request.max_tokens === "number" ? undefined : {}),
  },
  {
    name: "first-message-user",
    says: 'messages: first message must use the "user" role',
    find: (_, messages) => (messages.length > 0 && messages[0]!.role !== "user" ? {} : undefined),
  },
  {
    name: "roles-alternate",
    says: 'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row',
    find: (_, messages) => {
      const at = messages.findIndex((message, i) => i > 0 && message.role === messages[i - 1]!.role);
      return at < 0 ? undefined : { role: messages[at]!.role };
    },
  },
  {
    name: "text-not-blank",
    says: "{at}: text content blocks must contain non-whitespace text",
    find: (request, messages) => {
      if (Array.isArray(request.system) && request.system.some(blankText)) return { at: "system" };
      const blank = messages.some((message) => message.content.some((block) => blankText(block) || (block.type === "tool_result" && Array.isArray(block.content) && block.content.some(blankText))));
      return blank ? { at: "messages" } : undefined;
    },
  },
  {
    name: "tool-use-answered",
    says: "{at}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    find: (_, messages) => {
      for (let i = 0; i < messages.length; i++) {
        if (messages[i]!.role !== "assistant") continue;
        const answered = new Set(resultIds(messages[i + 1]));
        const missing = useIds(messages[i]).filter((id) => !answered.has(id));
        if (missing.length > 0) return { at: `messages.${i}`, ids: missing.join(", ") };
      }
      return undefined;
    },
  },
  {
    name: "tool-results-first",
    says: "{at}: Did not find {count} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.",
    find: (_, messages) => {
      for (let i = 1; i < messages.length; i++) {
        const count = useIds(messages[i - 1]).length;
        if (count === 0 || messages[i]!.role !== "user") continue;
        if (!messages[i]!.content.slice(0, count).every((block) => block.type === "tool_result")) return { at: `messages.${i}`, count: String(count) };
      }
      return undefined;
    },
  },
  {
    name: "tool-result-matches-use",
    says: "{at}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    find: (_, messages) => {
      for (let i = 0; i < messages.length; i++) {
        const open = new Set(i > 0 ? useIds(messages[i - 1]) : []);
        const k = messages[i]!.content.findIndex((block) => block.type === "tool_result" && !open.has(String(block.tool_use_id)));
        if (k >= 0) return { at: `messages.${i}.content.${k}`, id: String(messages[i]!.content[k]!.tool_use_id) };
      }
      return undefined;
    },
  },
  {
    name: "cache-breakpoints-at-most-4",
    says: `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {count}.`,
    find: (request, messages) => {
      const blocks = [...objects(request.system), ...objects(request.tools), ...messages.flatMap((message) => message.content)];
      const count = blocks.filter((block) => block.cache_control !== undefined).length;
      return count > MAX_CACHE_BREAKPOINTS ? { count: String(count) } : undefined;
    },
  },
  {
    name: "thinking-signed",
    says: "{at}: Invalid `signature` in `thinking` block",
    find: (_, messages, context) => {
      if (!context) return undefined;
      return firstBlock(messages, (block) => isThinkingBlock(block) && !context.issued(block));
    },
  },
  {
    name: "thinking-not-last",
    says: "{at}: The final block in an assistant message cannot be `thinking`.",
    find: (_, messages) => {
      const i = messages.findIndex((message) => message.role === "assistant" && isThinkingBlock(message.content.at(-1)));
      return i < 0 ? undefined : { at: `messages.${i}` };
    },
  },
  {
    name: "thinking-unchanged",
    says: "{at}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    find: (_, messages, context) => {
      const i = messages.findLastIndex((message) => message.role === "assistant");
      if (!context || i < 0 || !messages[i]!.content.some(isThinkingBlock)) return undefined;
      const answer = context.answerOf(messages[i]!.content);
      if (answer === undefined) return undefined;
      // Text may be merged or left out (a blank one must be); thinking keeps its place among the rest.
      const sent = layout(messages[i]!.content);
      const given = layout(answer);
      const k = sent.findIndex((key, n) => key !== given[n]);
      if (k < 0 && sent.length === given.length) return undefined;
      return { at: `messages.${i}.content.${Math.max(0, k < 0 ? sent.length : k)}` };
    },
  },
  {
    name: "thinking-on-begins-turn",
    says:
      "{at}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{type}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at " +
      DOCS,
    find: (request, messages) => {
      if (!thinkingOn(request)) return undefined;
      const start = assistantTurnStart(messages);
      const first = start === undefined ? undefined : messages[start]!.content[0];
      if (start === undefined || isThinkingBlock(first)) return undefined;
      // An assistant message in the final position is the answer being continued, not a tool round.
      if (start === messages.length - 1) return undefined;
      return { at: `messages.${start}`, type: String(first?.type) };
    },
  },
  {
    name: "thinking-off-turn-unthought",
    says: "{at}: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
    find: (request, messages) => {
      if (!thinkingOff(request)) return undefined;
      const start = assistantTurnStart(messages);
      if (start === undefined) return undefined;
      for (let i = start; i < messages.length; i++) {
        const k = messages[i]!.role === "assistant" ? messages[i]!.content.findIndex(isThinkingBlock) : -1;
        if (k >= 0) return { at: `messages.${i}.content.${k}` };
      }
      return undefined;
    },
  },
];

/** A breach: the rule's name and the API's words for it. */
export interface RuleBreach {
  rule: string;
  message: string;
}

/** The first rule the request breaks, in the order above (the API reports one at a time). */
export function requestBreach(request: RuleRequest, context?: RuleContext): RuleBreach | undefined {
  const messages = normalMessages(request.messages);
  for (const rule of ANTHROPIC_REQUEST_RULES) {
    const found = rule.find(request, messages, context);
    if (found) return { rule: rule.name, message: rule.says.replace(/\{(\w+)\}/g, (_, key: string) => found[key] ?? `{${key}}`) };
  }
  return undefined;
}

/** The API's 400 body for a breach. */
export function breachBody(breach: RuleBreach, requestId: string): Json {
  return { type: "error", error: { type: "invalid_request_error", message: breach.message }, request_id: requestId };
}

function normalMessages(value: unknown): Message[] {
  if (!Array.isArray(value)) return [];
  return value.map((message: Json) => ({
    role: String(message?.role),
    // A string content is one text block.
    content: typeof message?.content === "string" ? [{ type: "text", text: message.content }] : objects(message?.content),
  }));
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((item): item is Json => typeof item === "object" && item !== null) : [];
}

function blankText(block: unknown): boolean {
  const b = block as Json;
  return b?.type === "text" && (typeof b.text !== "string" || b.text.trim() === "");
}

function useIds(message: Message | undefined): string[] {
  return message?.role === "assistant" ? message.content.filter((block) => block.type === "tool_use").map((block) => String(block.id)) : [];
}

function resultIds(message: Message | undefined): string[] {
  return message?.role === "user" ? message.content.filter((block) => block.type === "tool_result").map((block) => String(block.tool_use_id)) : [];
}

/** Thinking with a budget: the form whose turn must begin with a thinking block (an adaptive model may choose not to think). */
function thinkingOn(request: RuleRequest): boolean {
  return (request.thinking as Json | undefined)?.type === "enabled";
}

function thinkingOff(request: RuleRequest): boolean {
  const type = (request.thinking as Json | undefined)?.type;
  return type !== "enabled" && type !== "adaptive";
}

function firstBlock(messages: Message[], test: (block: Json) => boolean): { at: string } | undefined {
  for (let i = 0; i < messages.length; i++) {
    const k = messages[i]!.content.findIndex(test);
    if (k >= 0) return { at: `messages.${i}.content.${k}` };
  }
  return undefined;
}

/** An answer's blocks as the thinking rule compares them: thinking whole, a call by its id, text as a mark (blank text as nothing). */
function layout(blocks: readonly Json[]): string[] {
  const keys = blocks.flatMap((block) => {
    if (isThinkingBlock(block)) return [JSON.stringify([block.type, block.thinking, block.signature, block.data])];
    if (block.type === "tool_use") return [`tool_use ${String(block.id)}`];
    if (block.type === "text") return typeof block.text === "string" && block.text.trim() !== "" ? ["text"] : [];
    return [String(block.type)];
  });
  // Text next to text may be one block or several.
  return keys.filter((key, i) => key !== "text" || keys[i - 1] !== "text");
}
