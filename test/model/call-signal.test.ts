import { describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { callSignal } from "../../src/model/call-signal.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
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

  test("a model client's requests leave nothing on its own signal: no AbortSignal a request outlives its call", async () => {
    await using server = ScriptedModelServer.start([], { respond: () => ({ text: "done" }) });
    const { client } = clientFor(server.url);
    const signals = () => {
      Bun.gc(true);
      return heapStats().objectTypeCounts.AbortSignal ?? 0;
    };
    // Warm: what the first calls create once (the SDK's, the server's) is not counted.
    for (let i = 0; i < 5; i++) await client.complete(ask("hi"));
    const before = signals();
    const calls = 40;
    for (let i = 0; i < calls; i++) await client.complete({ ...ask("hi"), signal: new AbortController().signal });
    for (let i = 0; i < calls; i++) await client.complete(ask("hi"));
    // Before, the openai SDK's listener on the client's signal kept two a call: 160 more.
    expect(signals() - before).toBeLessThan(10);
  });
});
