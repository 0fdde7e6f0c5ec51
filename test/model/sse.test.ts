import { expect, test } from "bun:test";
import { readSse, type SseEvent } from "../../src/model/sse.ts";

// The event-stream reader over bytes as the network delivers them: an event is
// the same whatever read boundary falls inside it, a CRLF split in two included.

const BODY =
  'event: message_start\r\ndata: {"type":"message_start"}\r\n\r\n' +
  ": keep-alive\r\n\r\n" +
  'event: content_block_delta\r\ndata: {"text":"h\u00e9llo"}\r\ndata: second line\r\n\r\n' +
  "data: last\r\n\r\n";

async function eventsOf(chunks: Uint8Array[]): Promise<SseEvent[]> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const events: SseEvent[] = [];
  for await (const event of readSse(body, { idleMs: 5_000 })) events.push(event);
  return events;
}

test("CRLF-delimited events read alike whichever byte a read ends at (a CR and its LF in two reads too)", async () => {
  const bytes = new TextEncoder().encode(BODY);
  const whole = await eventsOf([bytes]);
  expect(whole).toEqual([
    { event: "message_start", data: '{"type":"message_start"}' },
    { event: "content_block_delta", data: '{"text":"h\u00e9llo"}\nsecond line' },
    { event: "message", data: "last" },
  ]);
  for (let at = 1; at < bytes.length; at++) {
    expect({ at, events: await eventsOf([bytes.subarray(0, at), bytes.subarray(at)]) }).toEqual({ at, events: whole });
  }
  // Every byte a read of its own.
  expect(await eventsOf([...bytes].map((byte) => new Uint8Array([byte])))).toEqual(whole);
});
