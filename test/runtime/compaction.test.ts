import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
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
  test("moves big results to files, keeping a pointer and a preview, and leaves pairs intact", () => {
    const dir = join(tempDir(), "tool-results", "lead");
    const big = "x".repeat(5_000);
    const history = [call("a"), result("a", big), call("b"), result("b", "small")];
    const { messages, persisted } = persistLargeToolResults(history, { thresholdChars: 1, largeToolResultChars: 1_000, resultsDir: dir });
    expect(persisted).toBe(1);
    const replaced = messages[1] as Extract<ChatMessage, { role: "tool" }>;
    expect(replaced.toolCallId).toBe("a");
    expect(replaced.content).toContain("saved to");
    expect(replaced.content.length).toBeLessThan(big.length);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(big);
    expect(messages[3]).toEqual(history[3]!);
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
        const compacted = await compact(messages, { thresholdChars, largeToolResultChars: 1_000_000, resultsDir: tempDir() }, { model, identity: "lead", systemPrompt: "s" });
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
