import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { InvalidMessageError } from "../../src/core/errors.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import { createMessage, parseMailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { eventEnvelope, eventFromMessage } from "../../src/core/runtime-event.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { tempDir } from "../support/temp-dir.ts";

// A message file exactly as written before reply ids existed (same field set and order).
const OLD_FILE = `{
  "id": "0b3c9f6e-1d2a-4c5b-8e7f-0123456789ab",
  "sender": "lead",
  "recipient": "alice",
  "kind": "task",
  "content": "write schema.sql",
  "createdAtUtc": "2026-03-01T12:00:00.000Z",
  "idempotencyKey": "0b3c9f6e-1d2a-4c5b-8e7f-0123456789ab"
}
`;

function ctx() {
  return { clock: new ManualClock("2026-03-01T12:00:00.000Z"), ids: new SequentialIds() };
}

describe("reply ids on messages", () => {
  test("an old message file without them parses and serialises back to the same bytes", () => {
    const message = parseMailboxMessage(JSON.parse(OLD_FILE));
    expect(message.inReplyTo).toBeUndefined();
    expect(message.requestId).toBeUndefined();
    expect(serializeMessage(message)).toBe(OLD_FILE);
  });

  test("an old message file in ready/ is claimed and acked as before", async () => {
    const stateDir = tempDir("agent-reply-ids-");
    const ready = join(stateDir, "mailboxes", "alice", "ready");
    mkdirSync(ready, { recursive: true });
    writeFileSync(join(ready, "0b3c9f6e-1d2a-4c5b-8e7f-0123456789ab.json"), OLD_FILE);
    const store = new FileMailboxStore({ stateDir, clock: new ManualClock("2026-03-01T12:01:00.000Z") });
    const claimed = await store.claim("alice");
    expect(claimed?.content).toBe("write schema.sql");
    expect(claimed?.inReplyTo).toBeUndefined();
    await store.ack(claimed!);
    expect(await store.claim("alice")).toBeNull();
  });

  test("a message carries both through the store and into the event envelope", async () => {
    const c = ctx();
    const task = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "t" }, c);
    const request = createMessage({ sender: "lead", recipient: "alice", kind: "message", content: "r" }, c);
    const reply = createMessage(
      { sender: "alice", recipient: "lead", kind: "result", content: "done", inReplyTo: task.id, requestId: request.id },
      c,
    );
    const text = serializeMessage(reply);
    expect(text).toContain(`"inReplyTo": "${task.id}"`);
    expect(text).toContain(`"requestId": "${request.id}"`);

    const stateDir = tempDir("agent-reply-ids-");
    const store = new FileMailboxStore({ stateDir, clock: c.clock });
    await store.send(reply);
    const claimed = (await store.claim("lead"))!;
    expect(claimed).toEqual(reply);

    const envelope = JSON.parse(eventEnvelope(eventFromMessage(claimed)));
    expect(envelope.agent_event).toMatchObject({ id: reply.id, from: "alice", kind: "result", in_reply_to: task.id, request_id: request.id });
    expect(envelope.content).toBe("done");
  });

  test("an event without them keeps the envelope it always had", () => {
    const envelope = JSON.parse(eventEnvelope(eventFromMessage(parseMailboxMessage(JSON.parse(OLD_FILE)))));
    expect(Object.keys(envelope.agent_event)).toEqual(["id", "source", "from", "kind", "sent_at"]);
  });

  test("a reply id that is not a message id is refused, naming the field", () => {
    const fields = JSON.parse(OLD_FILE);
    expect(() => parseMailboxMessage({ ...fields, inReplyTo: "not-an-id" })).toThrow(InvalidMessageError);
    expect(() => parseMailboxMessage({ ...fields, inReplyTo: "not-an-id" })).toThrow(/inReplyTo/);
    expect(() => parseMailboxMessage({ ...fields, requestId: 7 })).toThrow(/requestId/);
  });
});
