import { describe, expect, test } from "bun:test";
import { callSignal } from "../../src/model/call-signal.ts";
import { AnthropicModelClient } from "../../src/model/anthropic/anthropic-client.ts";
import type { ModelClient } from "../../src/model/types.ts";
import { ResponsesModelClient } from "../../src/model/responses/responses-client.ts";
import { anthropicAnswer } from "../support/anthropic-stream.ts";
import { liveObjects } from "../support/collected.ts";
import { ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { responsesText } from "../support/responses-stream.ts";
import { ask, clientFor } from "./helpers.ts";

describe("callSignal", () => {
  test("aborts with the reason of whichever source aborts first; one aborted already aborts it at once", () => {
    const [turn, closing] = [new AbortController(), new AbortController()];
    const call = callSignal(turn.signal, undefined, closing.signal);
    expect(call.signal.aborted).toBe(false);
    closing.abort(new Error("client closed"));
    expect(call.signal.aborted).toBe(true);
    expect((call.signal.reason as Error).message).toBe("client closed");
    turn.abort(new Error("later"));
    expect((call.signal.reason as Error).message).toBe("client closed");
    expect((callSignal(undefined, turn.signal).signal.reason as Error).message).toBe("later");
  });

  test("once released, a source's abort no longer reaches the call", () => {
    const closing = new AbortController();
    const call = callSignal(closing.signal);
    call.release();
    closing.abort();
    expect(call.signal.aborted).toBe(false);
  });

  // Each client over its own dialect; the Responses one posts through the openai SDK.
  const clients: Array<[string, ScriptedReply, (url: string) => ModelClient]> = [
    ["chat completions", { text: "done" }, (url) => clientFor(url).client],
    [
      "Anthropic Messages",
      anthropicAnswer([{ type: "text", text: "done" }], "end_turn", { input_tokens: 5, output_tokens: 1 }),
      (url) => new AnthropicModelClient({ model: "claude-sonnet-4-5", apiKey: "sk-ant-test", baseUrl: url, timeoutMs: 10_000, maxRetries: 0, maxOutputTokens: () => 64_000, reasons: () => false }),
    ],
    [
      "Responses",
      responsesText("done"),
      (url) => new ResponsesModelClient({ model: "gpt-5-mini", apiKey: "sk-test", baseUrl: `${url}/v1`, timeoutMs: 10_000, maxRetries: 0, reasons: () => false }),
    ],
  ];

  test.each(clients)("%s: a client's requests leave nothing on its own signal, no AbortSignal a request outlives its call", async (_dialect, reply, make) => {
    await using server = ScriptedModelServer.start([], { respond: () => reply });
    const client = make(server.url);
    const signals = () => liveObjects("AbortSignal");
    // Warm: what the first calls create once (the SDK's, the server's) is not counted.
    for (let i = 0; i < 5; i++) await client.complete(ask("hi"));
    const before = await signals();
    const calls = 40;
    for (let i = 0; i < calls; i++) await client.complete({ ...ask("hi"), signal: new AbortController().signal });
    for (let i = 0; i < calls; i++) await client.complete(ask("hi"));
    // Before, the openai SDK's listener on the client's signal kept two a call:
    // 160 more; a leak of even one a call passes the bound.
    expect((await signals()) - before).toBeLessThan(calls);
  });
});
