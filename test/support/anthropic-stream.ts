import type { ScriptedReply } from "./model-server.ts";

// Anthropic Messages answers for the scripted server (test/support/model-server.ts),
// written from the API's documentation: message_start, content blocks started,
// grown by deltas and stopped, message_delta, message_stop.

/** Anthropic's server-sent events: each with its `event:` name, as the API sends them. */
export function anthropicStream(events: Array<Record<string, unknown>>): ScriptedReply {
  const body = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("");
  return { raw: { contentType: "text/event-stream", body } };
}

/** An answer of these blocks (`text`, `thinking` with its `signature`, `tool_use`), streamed in pieces. */
export function anthropicAnswer(blocks: Array<Record<string, unknown>>, stop: string, usage: Record<string, number>): ScriptedReply {
  const events: Array<Record<string, unknown>> = [
    { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-sonnet-4-5", usage: { ...usage, output_tokens: 1 } } },
    { type: "ping" },
  ];
  blocks.forEach((block, index) => {
    if (block.type === "thinking") {
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } });
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else if (block.type === "tool_use") {
      events.push({ type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      const json = JSON.stringify(block.input);
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(0, 10) } });
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(10) } });
    } else {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const word of String(block.text).split(/(?<= )/)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: word } });
    }
    events.push({ type: "content_block_stop", index });
  });
  events.push({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, { type: "message_stop" });
  return anthropicStream(events);
}

