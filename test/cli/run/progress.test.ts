import { expect, test } from "bun:test";
import { clip, progressLine } from "../../../src/cli/run/progress.ts";
import type { RunEvent } from "../../../src/runtime/run-types.ts";

const call: RunEvent = { type: "tool_call", agent: "lead", id: "c1", name: "write_file", arguments: '{"path":"a.txt","content":"hi"}' };
const ok: RunEvent = { type: "tool_result", agent: "lead", id: "c1", name: "write_file", content: "wrote 2 bytes", isError: false };
const failed: RunEvent = { type: "tool_result", agent: "lead", id: "c1", name: "shell", content: "denied:\nheadless", isError: true };
const retry: RunEvent = { type: "model_retry", agent: "lead", attempt: 2, delayMs: 1500, reason: "HTTP 503" };
const text: RunEvent = { type: "assistant", agent: "lead", text: "done" };
const request: RunEvent = { type: "model_request", agent: "lead", turn: 1 };

test("quiet says nothing", () => {
  for (const event of [call, ok, failed, retry, text, request]) expect(progressLine(event, "quiet")).toBeUndefined();
});

test("normal: tool calls, failures, retries and warnings only", () => {
  expect(progressLine(call, "normal")).toBe('[lead] write_file {"path":"a.txt","content":"hi"}');
  expect(progressLine(ok, "normal")).toBeUndefined();
  expect(progressLine(failed, "normal")).toBe("[lead] shell failed: denied:⏎headless");
  expect(progressLine(retry, "normal")).toBe("[lead] model request failed (HTTP 503); retry 2 in 1.5 s");
  expect(progressLine({ type: "warning", agent: "lead", message: "hook timed out" }, "normal")).toBe("[lead] warning: hook timed out");
  expect(progressLine(text, "normal")).toBeUndefined();
  expect(progressLine(request, "normal")).toBeUndefined();
});

test("verbose adds results, text, model turns and compaction", () => {
  expect(progressLine(ok, "verbose")).toBe("[lead] write_file ok: wrote 2 bytes");
  expect(progressLine(text, "verbose")).toBe("[lead] done");
  expect(progressLine(request, "verbose")).toBe("[lead] model request 1");
  expect(progressLine({ type: "compaction", agent: "lead", summarisedMessages: 4, persistedResults: 1 }, "verbose")).toContain(
    "4 message(s) summarised, 1 large result(s)",
  );
  expect(progressLine({ type: "user", agent: "lead", content: "x" }, "verbose")).toBeUndefined();
});

test("clip keeps one line of bounded length", () => {
  expect(clip("a\nb", 10)).toBe("a⏎b");
  expect(clip("x".repeat(20), 10)).toBe(`${"x".repeat(9)}…`);
});
