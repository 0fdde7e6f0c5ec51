import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { ResponsesBodyEncoder } from "../../src/model/responses/responses-body.ts";
import { ResponsesModelClient } from "../../src/model/responses/responses-client.ts";
import { REASONING_EXTRA, type ResponsesRequestOptions, toResponsesRequest } from "../../src/model/responses/responses-request.ts";
import type { ChatMessage, ToolSpec } from "../../src/model/types.ts";
import { generatedMessage } from "../support/generated-history.ts";
import { responsesText } from "../support/responses-stream.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { READ_FILE, wholeBodyServer } from "./helpers.ts";

// The Responses client encodes a request's JSON a message at a time (only new
// messages cost a step) and posts it through the SDK as it is: what reaches the
// server must be byte for byte JSON.stringify of the request object
// toResponsesRequest builds, whatever the history.

const GLOB: ToolSpec = { name: "glob", description: "Find \"files\" — ünïcode", parameters: { type: "object", properties: { pattern: { type: "string" } } } };

const expected = (options: ResponsesRequestOptions) => JSON.stringify({ ...toResponsesRequest(options), stream: true });

/** A message of any kind, reasoning items (with their encrypted content, or without: not sent back) among what an answer may keep. */
const message = (next: () => number, n: number) =>
  generatedMessage(next, n, REASONING_EXTRA, (n, text) => [
    { type: "reasoning", id: `rs_${n}`, summary: [{ type: "summary_text", text: text("why") }], encrypted_content: `gAAAA-${n}` },
    { type: "reasoning", id: `rs_${n}b`, summary: [] },
  ]);

describe("the Responses request body", () => {
  test("byte for byte JSON.stringify of the whole request, step after step, over 200 generated histories", async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = seededRandom(seed);
      const encoder = new ResponsesBodyEncoder();
      const history: ChatMessage[] = next() < 0.8 ? [{ role: "system", content: "You are the Lead." }] : [];
      const steps = 1 + Math.floor(next() * 12);
      for (let step = 0; step < steps; step++) {
        for (let i = Math.floor(next() * 4); i >= 0; i--) history.push(message(next, history.length));
        // An answer that sends nothing back (no text, no calls, no reasoning with its content).
        if (next() < 0.1) history.push({ role: "assistant", content: null });
        if (next() < 0.05 && history.length > 1) history.push(history[history.length - 2]!);
        // Compaction: new objects with the old ones' text.
        if (next() < 0.05) history.splice(1, history.length - 1, ...structuredClone(history.slice(-3)));
        const options: ResponsesRequestOptions = {
          model: next() < 0.5 ? "gpt-5-mini" : "gpt-\"quoted\"",
          messages: [...history],
          tools: next() < 0.2 ? [] : next() < 0.5 ? [READ_FILE] : [READ_FILE, GLOB],
          ...(next() < 0.7 ? { maxTokens: 1 + Math.floor(next() * 64_000) } : {}),
          encryptedReasoning: next() < 0.6,
        };
        const body = await encoder.encode(options, { stream: true }).text();
        if (body !== expected(options)) throw new Error(`seed ${seed}, step ${step}:\n${body}\n!==\n${expected(options)}`);
      }
    }
  });

  test("a message already sent is not encoded again on the next step", async () => {
    const encoder = new ResponsesBodyEncoder();
    let reads = 0;
    const counted = { role: "user", get content() {
      reads += 1;
      return "read a.txt";
    } } as ChatMessage;
    const options = (messages: ChatMessage[]): ResponsesRequestOptions => ({ model: "m", messages, tools: [READ_FILE], encryptedReasoning: true });
    await encoder.encode(options([counted]), {}).text();
    const first = reads;
    await encoder.encode(options([counted, { role: "assistant", content: "ok" }]), {}).text();
    await encoder.encode(options([counted, { role: "assistant", content: "ok" }, { role: "user", content: "more" }]), {}).text();
    expect(first).toBeGreaterThan(0);
    expect(reads).toBe(first);
  });
});

describe("the client", () => {
  let server: Server<undefined> | undefined;
  afterEach(() => {
    server?.stop(true);
    server = undefined;
  });

  test("posts each step's body whole, with its Content-Length and the SDK's auth, byte for byte the request object's JSON", async () => {
    const answer = responsesText("ok").raw!;
    const recording = wholeBodyServer(answer);
    server = recording.server;
    const client = new ResponsesModelClient({
      model: "gpt-5-mini",
      apiKey: "sk-test",
      baseUrl: `${recording.url}/v1`,
      timeoutMs: 10_000,
      maxRetries: 0,
      reasons: () => true,
    });
    const history: ChatMessage[] = [{ role: "system", content: "You are \"terse\" — ünïcode" }, { role: "user", content: "read a.txt" }];
    const sent: ResponsesRequestOptions[] = [];
    const step = async (tools: ToolSpec[]) => {
      sent.push({ model: "gpt-5-mini", messages: [...history], tools, encryptedReasoning: true });
      const response = await client.complete({ identity: "lead", messages: [...history], tools });
      expect(response.message.content).toBe("ok");
    };
    await step([READ_FILE]);
    history.push({ role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' }], extra: { [REASONING_EXTRA]: [{ type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAA" }] } });
    history.push({ role: "tool", toolCallId: "call_1", content: "alpha\n" });
    await step([READ_FILE]);
    history.push({ role: "assistant", content: "alpha" }, { role: "user", content: "and glob" });
    await step([READ_FILE, GLOB]);
    expect(recording.bodies).toEqual(sent.map(expected));
    for (const headers of recording.headers) {
      expect([headers.get("authorization"), headers.get("content-type"), headers.get("x-agent-name")]).toEqual(["Bearer sk-test", "application/json", "lead"]);
    }
    await client.close();
  });
});
