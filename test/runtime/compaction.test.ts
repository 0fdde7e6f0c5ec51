import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatMessage } from "../../src/model/types.ts";
import { persistLargeToolResults, safeCutPoints, thresholdForWindow } from "../../src/runtime/compaction.ts";
import { sizeOf } from "../../src/runtime/history-size.ts";
import { tempDir } from "../support/temp-dir.ts";

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
