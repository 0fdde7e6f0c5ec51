import type { ScriptedReply } from "./model-server.ts";

// OpenAI Responses answers for the scripted server (test/support/model-server.ts),
// written from the API's documentation.

/** Responses server-sent events: each with its `event:` name and its sequence number, as the API sends them. */
export function responsesStream(events: Array<Record<string, unknown>>): ScriptedReply {
  const body = events.map((event, n) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: n })}\n\n`).join("");
  return { raw: { contentType: "text/event-stream", body } };
}
