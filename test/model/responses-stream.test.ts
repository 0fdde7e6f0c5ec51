import { expect, test } from "bun:test";
import { ResponsesStreamAssembler } from "../../src/model/responses/responses-stream.ts";
import type { AnswerPiece } from "../../src/model/types.ts";

// A Responses event stream's pieces besides its text, told as they stream: each
// function call's arguments (named by its first, empty piece) and the reasoning summary.

test("function call arguments and reasoning summary deltas are told as pieces, each call by its place in the answer", () => {
  const pieces: AnswerPiece[] = [];
  const assembler = new ResponsesStreamAssembler(undefined, (piece) => pieces.push(piece));
  const push = (event: Record<string, unknown>) => assembler.push(JSON.stringify(event), String(event.type));
  push({ type: "response.output_item.added", output_index: 0, item: { type: "reasoning", id: "rs_1" } });
  push({ type: "response.reasoning_summary_text.delta", output_index: 0, delta: "Plan it." });
  push({ type: "response.output_item.added", output_index: 1, item: { type: "function_call", call_id: "call_a", name: "glob", arguments: "" } });
  push({ type: "response.function_call_arguments.delta", output_index: 1, delta: '{"pattern":' });
  push({ type: "response.function_call_arguments.delta", output_index: 1, delta: '"*"}' });
  expect(pieces).toEqual([
    { kind: "thinking", text: "Plan it." },
    { kind: "tool_input", index: 0, id: "call_a", name: "glob", json: "" },
    { kind: "tool_input", index: 0, id: "call_a", name: "glob", json: '{"pattern":' },
    { kind: "tool_input", index: 0, id: "call_a", name: "glob", json: '"*"}' },
  ]);
});
