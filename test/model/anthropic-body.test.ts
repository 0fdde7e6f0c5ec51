import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { AnthropicBodyEncoder } from "../../src/model/anthropic/anthropic-body.ts";
import { AnthropicModelClient } from "../../src/model/anthropic/anthropic-client.ts";
import { type AnthropicRequestOptions, THINKING_EXTRA, toAnthropicRequest } from "../../src/model/anthropic/anthropic-request.ts";
import type { ChatMessage, ToolSpec } from "../../src/model/types.ts";
import { anthropicAnswer } from "../support/anthropic-stream.ts";
import { generatedMessage } from "../support/generated-history.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { wholeBodyServer } from "./helpers.ts";

// The Anthropic client encodes a request's JSON a message at a time (only new
// messages cost a step): what it sends must be byte for byte JSON.stringify of
// the whole request object toAnthropicRequest builds, whatever the history —
// turns merged, breakpoints moving, thinking asked for or refused.

const READ: ToolSpec = { name: "read_file", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };
const GLOB: ToolSpec = { name: "glob", description: "Find \"files\" — ünïcode", parameters: { type: "object", properties: { pattern: { type: "string" } } } };

const expected = (options: AnthropicRequestOptions) => JSON.stringify({ ...toAnthropicRequest(options), stream: true });

/** A message of any kind, its thinking blocks among what an answer may keep. */
const message = (next: () => number, n: number) =>
  generatedMessage(next, n, THINKING_EXTRA, (n, text) => [
    { type: "thinking", thinking: text("plan"), signature: `sig-${n}` },
    { type: "redacted_thinking", data: `opaque-${n}` },
  ]);

describe("the Messages request body", () => {
  test("byte for byte JSON.stringify of the whole request, step after step, over 200 generated histories", async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = seededRandom(seed);
      const encoder = new AnthropicBodyEncoder();
      const history: ChatMessage[] = next() < 0.8 ? [{ role: "system", content: "You are the Lead." }] : [];
      const steps = 1 + Math.floor(next() * 12);
      for (let step = 0; step < steps; step++) {
        for (let i = Math.floor(next() * 4); i >= 0; i--) history.push(message(next, history.length));
        // The same message object twice (a breakpoint must mark one place, not both).
        if (next() < 0.05 && history.length > 1) history.push(history[history.length - 2]!);
        // Compaction: new objects with the old ones' text.
        if (next() < 0.05) history.splice(1, history.length - 1, ...structuredClone(history.slice(-3)));
        const options: AnthropicRequestOptions = {
          model: next() < 0.5 ? "claude-sonnet-4-5" : "claude-\"quoted\"",
          messages: [...history],
          tools: next() < 0.2 ? [] : next() < 0.5 ? [READ] : [READ, GLOB],
          maxTokens: next() < 0.3 ? 1000 : 32_000,
          thinking: next() < 0.6,
          adaptive: next() < 0.3,
        };
        const body = await encoder.encode(options, { stream: true }).text();
        if (body !== expected(options)) throw new Error(`seed ${seed}, step ${step}:\n${body}\n!==\n${expected(options)}`);
      }
    }
  });

  test("a message already sent is not encoded again on the next step", async () => {
    const encoder = new AnthropicBodyEncoder();
    let reads = 0;
    // Its text is read each time the message is encoded.
    const counted = { role: "user", get content() {
      reads += 1;
      return "read a.txt";
    } } as ChatMessage;
    const options = (messages: ChatMessage[]): AnthropicRequestOptions => ({ model: "m", messages, tools: [READ], maxTokens: 8192, thinking: false });
    const system: ChatMessage = { role: "system", content: "terse" };
    await encoder.encode(options([system, counted]), {}).text();
    const first = reads;
    const answered = [system, counted, { role: "assistant", content: "ok" } as ChatMessage];
    expect(await encoder.encode(options(answered), {}).text()).toBe(JSON.stringify(toAnthropicRequest(options(answered))));
    const more = [...answered, { role: "user", content: "more" } as ChatMessage];
    await encoder.encode(options(more), {}).text();
    expect(first).toBeGreaterThan(0);
    // The two whole encodings above read it; the encoder never again.
    expect(reads).toBe(first + 1);
  });
});

describe("the client", () => {
  let server: Server<undefined> | undefined;
  afterEach(() => {
    server?.stop(true);
    server = undefined;
  });

  test("sends each step's body whole, with its Content-Length, byte for byte the request object's JSON", async () => {
    const recording = wholeBodyServer(anthropicAnswer([{ type: "text", text: "ok" }], "end_turn", { input_tokens: 5, output_tokens: 2 }).raw!);
    server = recording.server;
    const bodies = recording.bodies;
    const client = new AnthropicModelClient({ model: "claude-sonnet-4-5", apiKey: "sk-ant-test", baseUrl: recording.url, timeoutMs: 10_000, maxRetries: 0, maxOutputTokens: () => 64_000, reasons: () => true });
    const history: ChatMessage[] = [{ role: "system", content: "You are \"terse\" — ünïcode" }, { role: "user", content: "read a.txt" }];
    const sent: AnthropicRequestOptions[] = [];
    const step = async (tools: ToolSpec[]) => {
      sent.push({ model: "claude-sonnet-4-5", messages: [...history], tools, maxTokens: 32_000, thinking: true });
      await client.complete({ identity: "lead", messages: [...history], tools });
    };
    await step([READ]);
    history.push({ role: "assistant", content: null, toolCalls: [{ id: "t1", name: "read_file", arguments: '{"path":"a.txt"}' }], extra: { [THINKING_EXTRA]: [{ type: "thinking", thinking: "read it", signature: "s" }] } });
    history.push({ role: "tool", toolCallId: "t1", content: "alpha\n" });
    await step([READ]);
    history.push({ role: "assistant", content: "alpha" }, { role: "user", content: "and glob" });
    await step([READ, GLOB]);
    expect(bodies).toEqual(sent.map(expected));
    await client.close();
  });
});
