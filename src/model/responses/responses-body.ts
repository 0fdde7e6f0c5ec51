import { ToolSetJson } from "../tool-set-json.ts";
import type { ChatMessage } from "../types.ts";
import { type ResponsesRequestOptions, toItems, toResponsesTool } from "./responses-request.ts";

/**
 * The JSON of a Responses request, encoded a step at a time, as WireBodyEncoder
 * does for chat completions: each message's input items are encoded once and
 * kept with the message (messages are never changed in place), the tools' with
 * their specs, so a step encodes only its new messages. The bytes are byte for
 * byte `JSON.stringify` of toResponsesRequest's object with `tail`'s fields
 * after; the body is a Blob of the pieces.
 */
export class ResponsesBodyEncoder {
  /** A message's items joined with commas; "" for one that sends none. */
  readonly #items = new WeakMap<ChatMessage, string>();
  readonly #tools = new ToolSetJson(toResponsesTool);

  encode(options: ResponsesRequestOptions, tail: Record<string, unknown>): Blob {
    const pieces: string[] = [`{"model":${JSON.stringify(options.model)},"input":[`];
    let first = true;
    for (const message of options.messages) {
      const items = this.#itemsOf(message);
      if (items === "") continue;
      // The comma a piece of its own: joined to the items, it would be a new copy of them each step.
      if (!first) pieces.push(",");
      pieces.push(items);
      first = false;
    }
    let end = "]";
    if (options.tools.length > 0) end += `,"tools":${this.#tools.json(options.tools)}`;
    end += `,"store":false`;
    if (options.encryptedReasoning) end += `,"include":["reasoning.encrypted_content"]`;
    if (options.maxTokens !== undefined) end += `,"max_output_tokens":${JSON.stringify(options.maxTokens)}`;
    const rest = JSON.stringify(tail);
    pieces.push(rest === "{}" ? `${end}}` : `${end},${rest.slice(1)}`);
    return new Blob(pieces);
  }

  #itemsOf(message: ChatMessage): string {
    let items = this.#items.get(message);
    if (items === undefined) {
      items = toItems(message)
        .map((item) => JSON.stringify(item))
        .join(",");
      this.#items.set(message, items);
    }
    return items;
  }
}
