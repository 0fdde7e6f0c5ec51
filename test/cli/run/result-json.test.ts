import { expect, test } from "bun:test";
import { OrderedWriter } from "../../../src/cli/run/ordered-writer.ts";
import { eventJson, initJson, resultJson } from "../../../src/cli/run/result-json.ts";
import { RunFailedError } from "../../../src/cli/run/run-failed.ts";
import { exitCodeFor } from "../../../src/cli/exit-codes.ts";
import type { RunResult } from "../../../src/runtime/run-types.ts";

const info = {
  agent: "lead",
  model: "m",
  workspace: "/w",
  sessionId: "0192d4c8-5e1f-7b3a-8c44-000000000001",
  stateDir: "/w/.agent/state/sessions/0192d4c8-5e1f-7b3a-8c44-000000000001",
  permissionMode: "acceptEdits",
  idempotencyKey: "0192d4c8-5e1f-7b3a-8c44-2f0a1d9e6b7c",
};
const result: RunResult = { result: "done", subtype: "success", isError: false, turns: 2, usage: { inputTokens: 30, outputTokens: 7 }, durationMs: 12 };

test("the result object: snake_case, usage in tokens, and what ran", () => {
  expect(resultJson(result, info)).toEqual({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "done",
    turns: 2,
    num_turns: 2,
    model_retries: 0,
    usage: { input_tokens: 30, output_tokens: 7 },
    total_cost_usd: null,
    cost_note: 'no known price for model "m": total_cost_usd is null; add its price to config "pricing" (docs/observability.md)',
    duration_ms: 12,
    duration_api_ms: 0,
    agent: "lead",
    model: "m",
    session_id: info.sessionId,
    idempotency_key: info.idempotencyKey,
    workspace: "/w",
    state_dir: info.stateDir,
  });
});

test("events keep their fields under snake_case keys", () => {
  expect(eventJson({ type: "tool_result", agent: "lead", id: "c", name: "shell", content: "x", isError: true })).toEqual({
    type: "tool_result",
    agent: "lead",
    id: "c",
    name: "shell",
    content: "x",
    is_error: true,
  });
  expect(eventJson({ type: "model_retry", agent: "lead", attempt: 1, delayMs: 500, reason: "HTTP 500" })).toMatchObject({ delay_ms: 500 });
  expect(initJson(info, "1.0.0")).toMatchObject({ type: "system", subtype: "init", permission_mode: "acceptEdits", session_id: info.sessionId, version: "1.0.0" });
});

test("a failed run exits 3 for a model failure and 1 for any other", () => {
  const failed = (subtype: RunResult["subtype"]) => new RunFailedError({ ...result, subtype, isError: true, result: "why" });
  expect(exitCodeFor(failed("error_model"))).toBe(3);
  for (const subtype of ["error_max_turns", "error_blocked", "error_interrupted"] as const) expect(exitCodeFor(failed(subtype))).toBe(1);
  expect(failed("error_max_turns").message).toBe("run ended with error_max_turns: why");
});

test("OrderedWriter keeps call order and reports the first failure at flush", async () => {
  const out: string[] = [];
  const writer = new OrderedWriter(async (text) => {
    await Bun.sleep(text === "a" ? 5 : 0);
    out.push(text);
  });
  writer.write("a");
  writer.write("b");
  await writer.flush();
  expect(out).toEqual(["a", "b"]);

  let calls = 0;
  const failing = new OrderedWriter(async () => {
    calls += 1;
    throw new Error("EPIPE");
  });
  failing.write("x");
  failing.write("y");
  await expect(failing.flush()).rejects.toThrow("EPIPE");
  expect(calls).toBe(1);
});
