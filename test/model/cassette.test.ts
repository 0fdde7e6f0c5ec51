import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CassetteMismatchError, CorruptStateFileError, ModelRequestError, UsageError } from "../../src/core/errors.ts";
import { type CassetteEntry, ReplayModelClient } from "../../src/model/cassette.ts";
import { createModelClient } from "../../src/model/factory.ts";
import type { ChatMessage, ModelClient, ModelRequest } from "../../src/model/types.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { READ_FILE, ask, fakeRetryDeps } from "./helpers.ts";

function recorder(server: ScriptedModelServer, recordPath: string): ModelClient {
  return createModelClient(
    { model: "test-model", apiKey: "sk-test", baseUrl: server.url, timeoutMs: 5_000, recordPath },
    { retryDeps: fakeRetryDeps().deps },
  );
}

function replayer(replayPath: string): ModelClient {
  // No key and no base URL: replay must never need the network.
  return createModelClient({ model: "test-model", timeoutMs: 5_000, replayPath });
}

/** A two-step tool run by the lead with a teammate's request in between. */
function followUp(first: ChatMessage): ModelRequest {
  return {
    identity: "lead",
    messages: [...ask("read a").messages, first, { role: "tool", toolCallId: "call_1", content: "A" }],
    tools: [READ_FILE],
  };
}

async function recordRun(path: string) {
  await using server = ScriptedModelServer.start([
    { identity: "lead", toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a" } }] },
    { identity: "alice", text: "alice here", usage: { prompt_tokens: 3, completion_tokens: 2 } },
    { identity: "lead", text: "a says A" },
  ]);
  const client = recorder(server, path);
  const first = await client.complete(ask("read a"));
  const alice = await client.complete(ask("who are you", { identity: "alice", tools: [] }));
  const second = await client.complete(followUp(first.message));
  await client.close();
  server.assertDone();
  return { first, alice, second };
}

describe("record and replay", () => {
  test("replay gives the recorded responses with the server gone", async () => {
    const path = join(tempDir(), "run.jsonl");
    const live = await recordRun(path);

    const lines = readFileSync(path, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toMatchObject({ v: 1, request: { identity: "lead", tools: ["read_file"] } });
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const client = replayer(path);
    // Agents interleave freely: each one's requests are answered in its own order.
    expect(await client.complete(ask("who are you", { identity: "alice", tools: [] }))).toEqual(live.alice);
    const first = await client.complete(ask("read a"));
    expect(first).toEqual(live.first);
    expect(await client.complete(followUp(first.message))).toEqual(live.second);
    await client.close();
  });

  test("a failed request is not recorded", async () => {
    const path = join(tempDir(), "run.jsonl");
    await using server = ScriptedModelServer.start([{ status: 401 }]);
    const client = recorder(server, path);
    await expect(client.complete(ask("hi"))).rejects.toBeInstanceOf(ModelRequestError);
    await client.close();
    expect(readFileSync(path, "utf8")).toBe("");
    server.assertDone();
  });

  test("a different request is refused, naming the first difference", async () => {
    const path = join(tempDir(), "run.jsonl");
    await recordRun(path);
    const client = replayer(path);
    const error = await client.complete(ask("read b")).catch((e: Error) => e);
    expect(error).toBeInstanceOf(CassetteMismatchError);
    expect(error.message).toBe(
      `request 1 from lead does not match the cassette ${path} (first difference: request.messages[1].content is "read b", the cassette has "read a"); re-record it with --record`,
    );
    const otherTools = await client.complete(ask("read a", { tools: [] })).catch((e: Error) => e);
    expect(otherTools.message).toContain("first difference: request.tools has 0 items, the cassette 1");
  });

  test("a request past the end of the cassette is refused", async () => {
    const path = join(tempDir(), "run.jsonl");
    await recordRun(path);
    const client = replayer(path);
    await client.complete(ask("who are you", { identity: "alice", tools: [] }));
    const error = await client.complete(ask("again", { identity: "alice", tools: [] })).catch((e: Error) => e);
    expect(error).toBeInstanceOf(CassetteMismatchError);
    expect(error.message).toBe(
      `request 2 from alice is past the end of the cassette ${path} (it holds 1 for alice); re-record it with --record`,
    );
    const stranger = await client.complete(ask("hi", { identity: "bob" })).catch((e: Error) => e);
    expect(stranger.message).toContain("request 1 from bob is past the end");
  });
});

describe("reading a cassette", () => {
  const entry: CassetteEntry = {
    v: 1,
    request: { identity: "lead", messages: [{ role: "user", content: "hi" }], tools: [] },
    response: {
      message: { role: "assistant", content: "hello" },
      finishReason: "stop",
      usage: { inputTokens: 1, outputTokens: 1 },
    },
  };

  test("a line that is not JSON is reported as file:line", () => {
    const path = join(tempDir(), "bad.jsonl");
    writeFileSync(path, `${JSON.stringify(entry)}\n{"v":1,"request":\n`);
    expect(() => new ReplayModelClient(path, "m")).toThrow(CorruptStateFileError);
    expect(() => new ReplayModelClient(path, "m")).toThrow(`corrupt state file ${path}:2: not valid JSON`);
  });

  test("a line that breaks the schema is reported as file:line with the field", () => {
    const path = join(tempDir(), "bad.jsonl");
    const userReply = { ...entry, response: { ...entry.response, message: { role: "user", content: "x" } } };
    writeFileSync(path, `\n${JSON.stringify(userReply)}\n`);
    expect(() => new ReplayModelClient(path, "m")).toThrow(
      `corrupt state file ${path}:2: not a cassette entry (response.message: a response must be an assistant message, not user)`,
    );
    writeFileSync(path, `${JSON.stringify({ ...entry, v: 2 })}\n`);
    expect(() => new ReplayModelClient(path, "m")).toThrow(`${path}:1: not a cassette entry (v:`);
  });

  test("a missing cassette is a usage error naming --replay", () => {
    const path = join(tempDir(), "absent.jsonl");
    expect(() => replayer(path)).toThrow(UsageError);
    expect(() => replayer(path)).toThrow(`cassette ${path} not found: check --replay`);
  });
});

describe("the environment section is volatile", () => {
  const system = (environment: string, instructions = "Be brief.") =>
    `You are the Lead.\n\n<project-instructions file="AGENTS.md">\n${instructions}\n</project-instructions>\n\n<environment>\n${environment}\n</environment>`;
  const request = (content: string): ModelRequest => ({
    identity: "lead",
    messages: [{ role: "system", content }, { role: "user", content: "hi" }],
    tools: [],
  });

  test("recorded as a placeholder; a replay on another day and branch matches, other instructions do not", async () => {
    const path = join(tempDir(), "env.jsonl");
    {
      await using server = ScriptedModelServer.start([{ text: "hello" }]);
      const client = recorder(server, path);
      await client.complete(request(system("Today's date: 2026-01-01\nGit repository: yes, on branch main")));
      await client.close();
      server.assertDone();
    }
    const recorded = JSON.parse(readFileSync(path, "utf8")) as CassetteEntry;
    expect(recorded.request.messages[0]).toEqual({
      role: "system",
      content: 'You are the Lead.\n\n<project-instructions file="AGENTS.md">\nBe brief.\n</project-instructions>\n\n<environment>(differs per run: not recorded)</environment>',
    });
    expect(readFileSync(path, "utf8")).not.toContain("2026-01-01");

    const later = replayer(path);
    expect((await later.complete(request(system("Today's date: 2027-06-30\nGit repository: no")))).message).toMatchObject({ content: "hello" });
    const other = replayer(path);
    expect(other.complete(request(system("Today's date: 2026-01-01", "Be verbose.")))).rejects.toThrow(CassetteMismatchError);
  });
});
