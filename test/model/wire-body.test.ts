import { afterEach, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { PROFILES } from "../../src/model/profiles/profiles.ts";
import type { ChatProfile } from "../../src/model/profiles/chat-profile.ts";
import type { ChatMessage, ToolSpec } from "../../src/model/types.ts";
import { toWireRequest } from "../../src/model/wire-request.ts";
import { READ_FILE, clientFor, wholeBodyServer } from "./helpers.ts";

// The client encodes a request's JSON itself, a message at a time (only new
// messages cost a step): what reaches the server must be byte for byte what
// JSON.stringify of the whole request object gives, in every profile's dialect.

let server: Server<undefined> | undefined;
afterEach(() => {
  server?.stop(true);
  server = undefined;
});

/** A server that records each raw request body (whole, with its length) and answers a streamed "ok". */
function recordingServer(): { url: string; bodies: string[] } {
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const recording = wholeBodyServer({ body: `${chunk({ role: "assistant", content: "ok" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`, contentType: "text/event-stream" });
  server = recording.server;
  return { url: `${recording.url}/v1`, bodies: recording.bodies };
}

const GLOB: ToolSpec = { name: "glob", description: "Find files", parameters: { type: "object", properties: { pattern: { type: "string" } } } };

/** A conversation with everything a dialect may echo: reasoning beside tool calls, a call's extra, an error result, text with quotes and non-ASCII. */
function conversation(): ChatMessage[] {
  return [
    { role: "system", content: "You are \"terse\" — ünïcode\n\tand escapes \u2028" },
    { role: "user", content: "read a.txt" },
    {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}', extra: { extra_content: { google: { thought_signature: "sig" } } } }],
      extra: { reasoning_content: "thinking…", reasoning_details: [{ type: "reasoning.text", text: "t" }] },
    },
    { role: "tool", toolCallId: "call_1", content: "line 1\nline 2", isError: true },
    { role: "assistant", content: "done", extra: { reasoning_content: "only echoed beside calls" } },
  ];
}

const expected = (profile: ChatProfile, messages: ChatMessage[], tools: ToolSpec[], maxTokens?: number) =>
  JSON.stringify({
    ...toWireRequest("test-model", messages, tools, profile, maxTokens),
    stream: true,
    ...(profile.streamOptions ? { stream_options: { include_usage: true } } : {}),
  });

describe("the request body", () => {
  for (const profile of Object.values(PROFILES)) {
    test(`${profile.name}: byte for byte JSON.stringify of the whole request, step after step, tools changed, history replaced`, async () => {
      const { url, bodies } = recordingServer();
      const { client } = clientFor(url, { profile });
      const messages = conversation();
      const steps: Array<{ messages: ChatMessage[]; tools: ToolSpec[] }> = [];
      const send = async (step: { messages: ChatMessage[]; tools: ToolSpec[] }) => {
        steps.push(step);
        await client.complete({ identity: "lead", messages: step.messages, tools: step.tools });
      };
      await send({ messages: messages.slice(0, 2), tools: [READ_FILE] });
      await send({ messages: messages.slice(0, 4), tools: [READ_FILE] });
      await send({ messages, tools: [READ_FILE, GLOB] });
      await send({ messages, tools: [] });
      // Compaction: new message objects with the old ones' text.
      await send({ messages: [messages[0]!, { role: "user", content: "summary" }, ...structuredClone(messages.slice(3))], tools: [GLOB] });
      expect(bodies).toEqual(steps.map((step) => expected(profile, step.messages, step.tools)));
      await client.close();
    });
  }

  test("a message already sent is not encoded again on the next step", async () => {
    const { url } = recordingServer();
    const { client } = clientFor(url);
    let reads = 0;
    // Its text is read each time the message is encoded.
    const counted = { role: "user", get content() {
      reads += 1;
      return "read a.txt";
    } } as ChatMessage;
    const system: ChatMessage = { role: "system", content: "terse" };
    await client.complete({ identity: "lead", messages: [system, counted], tools: [READ_FILE] });
    const first = reads;
    await client.complete({ identity: "lead", messages: [system, counted, { role: "assistant", content: "ok" }], tools: [READ_FILE] });
    await client.complete({ identity: "lead", messages: [system, counted, { role: "assistant", content: "ok" }, { role: "user", content: "more" }], tools: [READ_FILE] });
    expect(first).toBeGreaterThan(0);
    expect(reads).toBe(first);
    await client.close();
  });
});

describe("the tools' JSON", () => {
  test("each agent's tools are encoded once, however the agents' requests interleave on one client; the body stays byte for byte", async () => {
    const { url, bodies } = recordingServer();
    const { client } = clientFor(url);
    let reads = 0;
    // Its schema is read each time the tool is encoded.
    const counted = (name: string): ToolSpec => ({ name, description: `the ${name} tool`, get parameters() {
      reads += 1;
      return { type: "object", properties: { path: { type: "string" } } };
    } });
    // A Lead and two teammates, each with tool objects of its own (as each runner builds them).
    const sets = [[counted("read_file"), counted("spawn_teammate")], [counted("read_file"), GLOB], [counted("read_file"), GLOB]];
    const messages: ChatMessage[] = [{ role: "user", content: "go" }];
    for (let round = 0; round < 3; round++) {
      for (const [i, tools] of sets.entries()) await client.complete({ identity: `agent-${i}`, messages, tools });
    }
    // Four tools that count: each read once, in its first request.
    expect(reads).toBe(4);
    expect(bodies).toEqual(Array.from({ length: 3 }, () => sets.map((tools) => expected(PROFILES.openai, messages, tools))).flat());
    await client.close();
  });
});
