import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import { ATTACHMENT_ID, type AttachmentStore, attachmentIdOf } from "../../src/attachments/attachment-store.ts";
import { PREVIEW_BYTES, readAttachmentRange, spillToAttachment } from "../../src/attachments/attachment-text.ts";
import { loadSettings } from "../../src/config/load.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { backendRows } from "../support/store-backends.ts";
import { tempDir } from "../support/temp-dir.ts";

// Attachments (docs/mailbox.md, "Attachments"): the store contract on both
// backends, ranges cut only between characters that join into the content byte
// for byte, the message an over-cap content becomes, and a teammate reading on
// in a message from the Lead too large for the mailbox.

/** Characters of one to four bytes, so every kind of cut is met. */
const MIXED = "a-é-日-😀-".repeat(40);

describe.each(backendRows())("attachments, store: %s", (_name, backend) => {
  test("put is durable, content-addressed and idempotent; another opening reads any range; an unknown id is undefined", async () => {
    const session = await backend.session();
    const store = session.open().attachments;
    const bytes = Buffer.from(MIXED);
    const first = await store.put(bytes);
    expect(first).toEqual({ id: attachmentIdOf(bytes), size: bytes.length });
    expect(first.id).toMatch(ATTACHMENT_ID);
    expect(await store.put(bytes)).toEqual(first);

    // As another process would open the session.
    const other = session.open().attachments;
    expect(Buffer.from((await other.read(first.id, 0, bytes.length + 10))!.bytes).equals(bytes)).toBe(true);
    expect(await other.read(first.id, 5, 7)).toEqual({ size: bytes.length, bytes: expect.anything() });
    expect(Buffer.from((await other.read(first.id, 5, 7))!.bytes).equals(bytes.subarray(5, 12))).toBe(true);
    expect((await other.read(first.id, bytes.length + 3, 10))!.bytes.length).toBe(0);
    expect(await other.read("0".repeat(32), 0, 10)).toBeUndefined();
    expect(await other.read("../../etc/passwd", 0, 10)).toBeUndefined();
  });

  test("ranges are whole characters: read on from each end, or at fixed offsets, they join into the content", async () => {
    const store = (await backend.session()).open().attachments;
    const bytes = Buffer.from(MIXED);
    const { id } = await store.put(bytes);
    for (const limit of [4, 5, 6, 7, 9, 64]) {
      let text = "";
      let at = 0;
      while (at < bytes.length) {
        const range = (await readAttachmentRange(store, id, at, limit))!;
        expect(range.start).toBe(at);
        expect(range.end).toBeGreaterThan(at);
        text += range.text;
        at = range.end;
      }
      expect(text).toBe(MIXED);
      // Fixed offsets too: each start moves back as the last end did.
      const parts: string[] = [];
      for (let offset = 0; offset < bytes.length; offset += limit) parts.push((await readAttachmentRange(store, id, offset, limit))!.text);
      expect(parts.join("")).toBe(MIXED);
    }
    expect(await readAttachmentRange(store, id, bytes.length, 10)).toEqual({ text: "", start: bytes.length, end: bytes.length, size: bytes.length });
  });
});

describe("spillToAttachment", () => {
  test("the message carries the first part under the cap and a note; the attachment holds all of it", async () => {
    const store: AttachmentStore = (await backendRows()[0]![1].session()).open().attachments;
    const content = MIXED.repeat(20);
    const cap = 2_000;
    const message = await spillToAttachment(content, cap, store);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(cap);
    const note = /\n\n\[… (\d+) more bytes in attachment ([0-9a-f]{32}) \((\d+) bytes in all, over the mailbox cap of 2000\); read them with read_attachment, id "\2", offset (\d+)\]$/.exec(message)!;
    expect(note).not.toBeNull();
    const kept = Number(note[4]);
    expect(message.slice(0, note.index)).toBe(Buffer.from(content).subarray(0, kept).toString());
    expect(Number(note[1]) + kept).toBe(Buffer.byteLength(content));
    const rest = await store.read(note[2]!, kept, Buffer.byteLength(content));
    expect(message.slice(0, note.index) + Buffer.from(rest!.bytes).toString()).toBe(content);
    // The default cap keeps PREVIEW_BYTES.
    expect(await spillToAttachment("x".repeat(PREVIEW_BYTES * 3), 1024 * 1024, store)).toStartWith(`${"x".repeat(PREVIEW_BYTES)}\n\n[… ${PREVIEW_BYTES * 2} more bytes`);
  });
});

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

describe("a message over the mailbox cap to a teammate", () => {
  test("the Lead's task of 1.5 MiB: alice gets its first part, reads on with read_attachment, answers; nothing quarantined", async () => {
    const brief = `${"a line of the brief, ".repeat(80)}\n`.repeat(1_000);
    const aliceReads: ScriptedReply = {
      identity: "alice",
      // The call is made from the note alice received: where the message's part ended.
      check: (request) => {
        const received = String(request.body.messages.at(-1)!.content);
        const note = /\[… \d+ more bytes in attachment ([0-9a-f]{32}) .*, offset (\d+)\]$/.exec(received);
        if (!note) throw new Error(`no attachment note in: ${received.slice(-300)}`);
        expect(received.slice(0, received.length - note[0].length - 2)).toBe(brief.slice(0, Number(note[2])));
        aliceReads.toolCalls = [{ name: "read_attachment", arguments: { id: note[1]!, offset: Number(note[2]) } }];
      },
    };
    const server = ScriptedModelServer.start([
      aliceReads,
      {
        identity: "alice",
        check: (request) => {
          const result = String(request.body.messages.findLast((m) => m.role === "tool")!.content);
          const start = Buffer.byteLength(brief.slice(0, PREVIEW_BYTES));
          expect(result).toBe(`[attachment ${attachmentIdOf(Buffer.from(brief))}: bytes ${start}-${start + 32 * 1024} of ${Buffer.byteLength(brief)}; continue with offset ${start + 32 * 1024}]\n${brief.slice(start, start + 32 * 1024)}`);
        },
        text: "read it",
      },
      { identity: "lead", text: "noted" },
    ]);
    const root = tempDir("agent-attach-");
    const workspace = join(root, "ws");
    mkdirSync(workspace);
    const stateDir = join(root, "state");
    const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode: "bypassPermissions" }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
    const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
    open.push(entry);
    const lead = await buildLead(settings, { stateDir, workspace });
    entry.lead = lead;
    await lead.team.spawn("alice", "reader", brief);
    const quiet = await runUntilQuiet(lead);
    // Her answer, and her notice that she is idle, in one event turn.
    expect(quiet.events).toBe(2);
    expect(quiet.turns).toHaveLength(1);
    server.assertDone();
    expect(lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    const counts = Object.fromEntries((await new FileMailboxStore({ stateDir }).list()).map((l) => [l.name, l.counts]));
    expect(counts.alice).toEqual({ ready: 0, processing: 0, done: 1, quarantine: 0 });
    // The attachment is in the session's state dir, whole.
    expect(readFileSync(join(stateDir, "attachments", attachmentIdOf(Buffer.from(brief))), "utf8")).toBe(brief);
  });
});
