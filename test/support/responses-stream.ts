import type { ScriptedReply } from "./model-server.ts";

// OpenAI Responses answers for the scripted server (test/support/model-server.ts),
// written from the API's documentation.

/** Responses server-sent events: each with its `event:` name and its sequence number, as the API sends them. */
export function responsesStream(events: Array<Record<string, unknown>>): ScriptedReply {
  const body = events.map((event, n) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: n })}\n\n`).join("");
  return { raw: { contentType: "text/event-stream", body } };
}

/** A whole Responses answer that says `text` and ends, with its usage. */
export function responsesText(text: string, usage = { input_tokens: 5, output_tokens: 1 }): ScriptedReply {
  const message = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  return responsesStream([
    { type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: { ...message, content: [], status: "in_progress" } },
    { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: "msg_1", delta: text },
    { type: "response.output_item.done", output_index: 0, item: message },
    { type: "response.completed", response: { id: "resp_1", status: "completed", output: [message], usage } },
  ]);
}
