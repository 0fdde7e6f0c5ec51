import { ToolSetJson } from "../tool-set-json.ts";
import type { ChatMessage } from "../types.ts";
import { type AnthropicRequestOptions, cacheBreakpoints, EPHEMERAL, thinkingPlan, toAnthropicTool, type Turn, turnPart, turnsToUnthink } from "./anthropic-request.ts";
import { isThinkingBlock } from "./assistant-turn.ts";

/** A block's JSON, with its type (the breakpoint and thinking rules look at it). */
interface EncodedBlock {
  type: unknown;
  json: string;
}

interface EncodedPart {
  role: Turn["role"];
  blocks: EncodedBlock[];
}

/** What `cache_control` adds to a block's JSON, before its closing brace. */
const BREAKPOINT = `,"cache_control":${JSON.stringify(EPHEMERAL)}}`;

/**
 * The JSON of an Anthropic Messages request, encoded a step at a time, as
 * WireBodyEncoder does for chat completions: each message's blocks are encoded
 * once and kept with the message (messages are never changed in place), the
 * tools' with their specs; a step joins the kept pieces into turns, adds the
 * cache breakpoints (where they go moves each step) and encodes only what is
 * new. The bytes are byte for byte `JSON.stringify` of toAnthropicRequest's
 * object with `tail`'s fields after; the body is a Blob of the pieces.
 */
export class AnthropicBodyEncoder {
  readonly #parts = new WeakMap<ChatMessage, EncodedPart>();
  /** A system message's text as JSON: the system prompt is most of a short request. */
  readonly #systemTexts = new WeakMap<ChatMessage, string>();
  readonly #tools = new ToolSetJson(toAnthropicTool);

  encode(options: AnthropicRequestOptions, tail: Record<string, unknown>): Blob {
    const system: ChatMessage[] = [];
    const turns: Array<{ role: Turn["role"]; content: EncodedBlock[] }> = [];
    for (const message of options.messages) {
      if (message.role === "system") {
        system.push(message);
        continue;
      }
      const part = this.#part(message);
      const last = turns.at(-1);
      if (last?.role === part.role) last.content.push(...part.blocks);
      else turns.push({ role: part.role, content: [...part.blocks] });
    }
    const { thinking, unthinkFrom } = thinkingPlan(options, turns);
    for (const turn of turnsToUnthink(turns, unthinkFrom)) turn.content = turn.content.filter((block) => !isThinkingBlock(block));
    const marked = new Map<number, number>();
    for (const [turn, block] of cacheBreakpoints(turns)) marked.set(turn, block);
    let head = `{"model":${JSON.stringify(options.model)},"max_tokens":${JSON.stringify(options.maxTokens)}`;
    if (system.length > 0) head += `,"system":[{"type":"text","text":${this.#systemText(system)}${BREAKPOINT}]`;
    const pieces: string[] = [`${head},"messages":[`];
    for (let t = 0; t < turns.length; t++) {
      const turn = turns[t]!;
      pieces.push(`${t > 0 ? "," : ""}{"role":"${turn.role}","content":[`);
      const breakpoint = marked.get(t);
      for (let b = 0; b < turn.content.length; b++) {
        if (b > 0) pieces.push(",");
        const json = turn.content[b]!.json;
        pieces.push(b === breakpoint ? json.slice(0, -1) + BREAKPOINT : json);
      }
      pieces.push("]}");
    }
    let end = "]";
    if (options.tools.length > 0) end += `,"tools":${this.#tools.json(options.tools)}`;
    if (thinking !== undefined) end += `,"thinking":${JSON.stringify(thinking)}`;
    const rest = JSON.stringify(tail);
    pieces.push(rest === "{}" ? `${end}}` : `${end},${rest.slice(1)}`);
    return new Blob(pieces);
  }

  #part(message: ChatMessage): EncodedPart {
    let part = this.#parts.get(message);
    if (part === undefined) {
      const made = turnPart(message)!;
      part = { role: made.role, blocks: made.blocks.map((block) => ({ type: block.type, json: JSON.stringify(block) })) };
      this.#parts.set(message, part);
    }
    return part;
  }

  #systemText(system: ChatMessage[]): string {
    if (system.length > 1) return JSON.stringify(system.map((message) => message.content).join("\n\n"));
    const message = system[0]!;
    let json = this.#systemTexts.get(message);
    if (json === undefined) {
      json = JSON.stringify(message.content);
      this.#systemTexts.set(message, json);
    }
    return json;
  }
}
