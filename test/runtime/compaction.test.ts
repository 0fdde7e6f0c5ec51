import { describe, expect, test } from "bun:test";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";
import { readAttachmentRange } from "../../src/attachments/attachment-text.ts";
import type { ChatMessage } from "../../src/model/types.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { compact, persistLargeToolResults, safeCutPoints, thresholdForWindow } from "../../src/runtime/compaction.ts";
import { sizeOf } from "../../src/runtime/history-size.ts";
import { longHistory } from "../support/long-history.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { fakeRetryDeps } from "../model/helpers.ts";

const call = (id: string): ChatMessage => ({ role: "assistant", content: null, toolCalls: [{ id, name: "shell", arguments: "{}" }] });
const result = (id: string, content = "ok"): ChatMessage => ({ role: "tool", toolCallId: id, content });

describe("safeCutPoints", () => {
  test("never separates a tool call from its result", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "u1" }, // 0
      call("a"), // 1
      result("a"), // 2
      { role: "assistant", content: "done" }, // 3
      { role: "user", content: "u2" }, // 4
      { role: "assistant", content: null, toolCalls: [{ id: "b", name: "x", arguments: "{}" }, { id: "c", name: "y", arguments: "{}" }] }, // 5
      result("b"), // 6
      result("c"), // 7
      { role: "assistant", content: "end" }, // 8
    ];
    expect(safeCutPoints(history)).toEqual([1, 3, 4, 5, 8]);
  });
});

describe("persistLargeToolResults", () => {
  test("saves big results whole as attachments, keeping a preview and a note saying how to read on, and leaves pairs intact", async () => {
    const results = new FileAttachments(tempDir());
    // Two-byte characters, so the preview's cut must fall between them.
    const big = "é".repeat(5_000);
    const history = [call("a"), result("a", big), call("b"), result("b", "small")];
    const { messages, persisted } = await persistLargeToolResults(history, { thresholdChars: 1, largeToolResultChars: 1_000, results });
    expect(persisted).toBe(1);
    const replaced = messages[1] as Extract<ChatMessage, { role: "tool" }>;
    expect(replaced.toolCallId).toBe("a");
    const [note, preview] = replaced.content.split("\n") as [string, string];
    const [, id, offset] = /read_attachment, id "([0-9a-f]{32})", offset (\d+)\]$/.exec(note) ?? [];
    expect(Number(offset)).toBe(2_000);
    expect(preview).toBe("é".repeat(1_000));
    // The preview and what read_attachment reads from the offset the note names join into the result.
    const rest = await readAttachmentRange(results, id as string, Number(offset), 32_768);
    expect(rest?.size).toBe(10_000);
    expect(`${preview}${rest?.text}`).toBe(big);
    expect(messages[3]).toEqual(history[3]!);
    // Saved once: a second compaction leaves the note as it is.
    expect((await persistLargeToolResults(messages, { thresholdChars: 1, largeToolResultChars: 1_000, results })).persisted).toBe(0);
  });

  test("what read_attachment read of a saved result stays: the model asked for it, and another note would send it round again", async () => {
    const results = new FileAttachments(tempDir());
    const read: ChatMessage = { role: "assistant", content: null, toolCalls: [{ id: "r", name: "read_attachment", arguments: "{}" }] };
    const history = [read, result("r", "y".repeat(5_000)), call("s"), result("s", "z".repeat(5_000))];
    const { messages, persisted } = await persistLargeToolResults(history, { thresholdChars: 1, largeToolResultChars: 1_000, results });
    expect(persisted).toBe(1);
    expect(messages[1]).toEqual(history[1]!);
    expect((messages[3] as Extract<ChatMessage, { role: "tool" }>).content).toStartWith("[tool result saved as attachment ");
  });
});

describe("sizeOf", () => {
  test("counts what a message carries beside its text (a thinking model's reasoning), which may be sent back", () => {
    const plain: ChatMessage = { role: "assistant", content: "ok", toolCalls: [{ id: "a", name: "x", arguments: "{}" }] };
    const thinking: ChatMessage = { ...plain, extra: { reasoning_content: "r".repeat(1000) }, toolCalls: [{ id: "a", name: "x", arguments: "{}", extra: { extra_content: { google: { thought_signature: "s".repeat(500) } } } }] };
    expect(sizeOf([thinking]) - sizeOf([plain])).toBeGreaterThan(1500);
  });
});

describe("thresholdForWindow", () => {
  test("the window less the output limit (at most a quarter of it), at 3 characters a token", () => {
    expect(thresholdForWindow(128_000, 16_384)).toBe(334_848);
    expect(thresholdForWindow(200_000, 100_000)).toBe(450_000);
  });
});

describe("compact", () => {
  // The cut: the earliest safe point whose tail is at most a quarter of the
  // threshold (else the last safe point). Computed here as it is defined, a tail
  // measured at each point; compact takes the sizes down in one pass.
  test("keeps the newest quarter of the threshold from a safe cut on, over generated histories", async () => {
    const server = ScriptedModelServer.start([], { respond: () => ({ text: "the summary" }) });
    try {
      const model = new OpenAIModelClient({ model: "test-model", apiKey: "sk-test", baseUrl: server.url, timeoutMs: 5_000, retryDeps: fakeRetryDeps().deps });
      let cuts = 0;
      for (let seed = 1; seed <= 12; seed++) {
        const messages = longHistory(20 + seed * 7, { seed })
          .split("\n")
          .filter((line) => line.startsWith('{"v":1,"type":"message"'))
          .map((line) => (JSON.parse(line) as { message: ChatMessage }).message);
        const thresholdChars = Math.floor(sizeOf(messages) / (1.5 + seed / 4));
        const points = safeCutPoints(messages);
        const cut = points.find((point) => sizeOf(messages.slice(point)) <= thresholdChars / 4) ?? points.at(-1)!;
        const compacted = await compact(messages, { thresholdChars, largeToolResultChars: 1_000_000, results: new FileAttachments(tempDir()) }, { model, identity: "lead", systemPrompt: "s" });
        expect(compacted?.summarisedMessages).toBe(cut);
        expect(compacted?.messages.slice(1)).toEqual(messages.slice(cut));
        if (cut !== points.at(-1)) cuts += 1;
      }
      // Most cuts were the quarter's, not the fallback to the last point.
      expect(cuts).toBeGreaterThan(8);
    } finally {
      await server.close();
    }
  });
});
