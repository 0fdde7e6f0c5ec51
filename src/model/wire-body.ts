import type { ChatProfile } from "./profiles/chat-profile.ts";
import type { ChatMessage, ToolSpec } from "./types.ts";
import { toWireMessage, toWireTool } from "./wire-request.ts";

/**
 * The JSON text of a chat-completions request, encoded a step at a time: a
 * message's JSON is kept with the message (messages are never changed in place;
 * compaction replaces them) and the tools' with the specs (built once per tool),
 * so a step of a long session encodes only its new messages, not 2.5 MB of
 * history again (~16 ms at 2 000 turns). A tool's JSON is kept with its spec,
 * so agents with tool sets of their own (a Lead and 32 teammates on one
 * client) do not encode theirs again each time another agent's request came
 * between. The text is byte for byte
 * `JSON.stringify` of the object toWireRequest builds, with `tail`'s fields after.
 */
export class WireBodyEncoder {
  readonly #profile: ChatProfile;
  readonly #messages = new WeakMap<ChatMessage, string>();
  readonly #tools = new WeakMap<ToolSpec, string>();
  readonly #sets = new WeakMap<ToolSpec, { specs: readonly ToolSpec[]; json: string }>();

  constructor(profile: ChatProfile) {
    this.#profile = profile;
  }

  encode(model: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[], maxTokens: number | undefined, tail: Record<string, unknown>): string {
    const parts = messages.map((message) => this.#message(message));
    let body = `{"model":${JSON.stringify(model)},"messages":[${parts.join(",")}]`;
    // Some compatible servers reject an empty `tools` array: left out, as toWireRequest does.
    if (tools.length > 0) body += `,"tools":${this.#toolsJson(tools)}`;
    if (maxTokens !== undefined) body += `,${JSON.stringify(this.#profile.maxTokensField)}:${JSON.stringify(maxTokens)}`;
    const rest = JSON.stringify(tail);
    return rest === "{}" ? `${body}}` : `${body},${rest.slice(1)}`;
  }

  #message(message: ChatMessage): string {
    let json = this.#messages.get(message);
    if (json === undefined) {
      json = JSON.stringify(toWireMessage(message, this.#profile));
      this.#messages.set(message, json);
    }
    return json;
  }

  #toolsJson(tools: readonly ToolSpec[]): string {
    // Each agent's set is kept under its first spec (an agent's specs are its own objects): a
    // request whose specs are those of the set kept joins nothing again.
    const kept = this.#sets.get(tools[0]!);
    if (kept && kept.specs.length === tools.length && kept.specs.every((spec, i) => spec === tools[i])) return kept.json;
    const json = `[${tools.map((tool) => this.#tool(tool)).join(",")}]`;
    this.#sets.set(tools[0]!, { specs: [...tools], json });
    return json;
  }

  #tool(tool: ToolSpec): string {
    let json = this.#tools.get(tool);
    if (json === undefined) {
      json = JSON.stringify(toWireTool(tool));
      this.#tools.set(tool, json);
    }
    return json;
  }
}
