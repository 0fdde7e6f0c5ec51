import type { ChatProfile } from "./profiles/chat-profile.ts";
import type { ChatMessage, ToolSpec } from "./types.ts";
import { ToolSetJson } from "./tool-set-json.ts";
import { toWireMessage, toWireTool } from "./wire-request.ts";

/**
 * The JSON of a chat-completions request, encoded a step at a time: a
 * message's JSON is kept with the message (messages are never changed in place;
 * compaction replaces them) and the tools' with the specs (ToolSetJson), so a
 * step of a long session encodes only its new messages, not 2.5 MB of history
 * again (~16 ms at 2 000 turns). The bytes are byte for byte `JSON.stringify` of the object
 * toWireRequest builds, with `tail`'s fields after.
 *
 * The body is a Blob of the kept pieces, not one string: joined, 2.5 MB of
 * history was a new string a step in the collected heap and a second copy when
 * fetch encoded it as UTF-8; a Blob is one native buffer, sent as it is (with
 * its Content-Length). At 2 000 turns the string's churn cost the step more
 * than its encoding: the heap grew and gave back pages each step, and the
 * server's parse in the same process then faulted twice as many in (bench/harness.ts).
 */
export class WireBodyEncoder {
  readonly #profile: ChatProfile;
  readonly #messages = new WeakMap<ChatMessage, string>();
  readonly #tools = new ToolSetJson(toWireTool);

  constructor(profile: ChatProfile) {
    this.#profile = profile;
  }

  encode(model: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[], maxTokens: number | undefined, tail: Record<string, unknown>): Blob {
    const pieces: string[] = new Array(messages.length * 2 + 1);
    pieces[0] = `{"model":${JSON.stringify(model)},"messages":[`;
    for (let i = 0; i < messages.length; i++) {
      pieces[2 * i + 1] = this.#message(messages[i]!);
      pieces[2 * i + 2] = i < messages.length - 1 ? "," : "";
    }
    let end = "]";
    // Some compatible servers reject an empty `tools` array: left out, as toWireRequest does.
    if (tools.length > 0) end += `,"tools":${this.#tools.json(tools)}`;
    if (maxTokens !== undefined) end += `,${JSON.stringify(this.#profile.maxTokensField)}:${JSON.stringify(maxTokens)}`;
    const rest = JSON.stringify(tail);
    pieces[pieces.length - 1] += rest === "{}" ? `${end}}` : `${end},${rest.slice(1)}`;
    return new Blob(pieces);
  }

  #message(message: ChatMessage): string {
    let json = this.#messages.get(message);
    if (json === undefined) {
      json = JSON.stringify(toWireMessage(message, this.#profile));
      this.#messages.set(message, json);
    }
    return json;
  }
}
