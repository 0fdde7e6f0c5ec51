import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Codex, type ThreadEvent, type ThreadOptions } from "@openai/codex-sdk";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY } from "../e2e/agent-binary.ts";
import { scriptedServers } from "../e2e/run-fixture.ts";

// The Codex SDK (@openai/codex-sdk, pinned, unpatched) drives dist/agent as it
// drives codex: `exec --experimental-json` with its --config overrides, the
// prompt on stdin, `resume ID` after the options for a thread's next turn, the
// key in CODEX_API_KEY. The endpoint is the scripted model server; no OpenAI
// variable is inherited, so what reaches it came through the SDK's options.

const startServer = scriptedServers();
const API_KEY = "sk-codex-sdk-test";

function codexSetup(script: ScriptedReply[], files: Record<string, string> = {}) {
  const server = startServer(script);
  const root = realpathSync(tempDir("agent-codex-sdk-"));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(workspace, path), content);
  const { OPENAI_API_KEY: _key, OPENAI_BASE_URL: _url, ...inherited } = process.env;
  const env = { ...(inherited as Record<string, string>), AGENT_STATE_DIR: join(root, "state"), NO_COLOR: "1" };
  const codex = new Codex({ codexPathOverride: AGENT_BINARY, baseUrl: server.url, apiKey: API_KEY, env });
  const options: ThreadOptions = { workingDirectory: workspace, skipGitRepoCheck: true, model: "scripted-model" };
  return { server, workspace, codex, options };
}

const userTexts = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === "user").map((m) => String(m.content));

/** A promise and its resolve, for a scripted reply to say "the request is here" or to hold the answer. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe("the Codex SDK drives agent exec", () => {
  test("run: the answer, its items and usage; the prompt from stdin, the key, base URL and model from the SDK's options", async () => {
    const { server, codex, options } = codexSetup([
      {
        text: "hello from agent",
        check: (r) => {
          expect(userTexts(r)).toEqual(["say hello"]);
          expect(r.headers.authorization).toBe(`Bearer ${API_KEY}`);
          expect(r.body.model).toBe("scripted-model");
        },
      },
    ]);
    // Options agent has no use for are sent as --config and must not stop the run.
    const thread = codex.startThread({ ...options, modelReasoningEffort: "high", webSearchMode: "live", approvalPolicy: "never", sandboxMode: "read-only" });
    const turn = await thread.run("say hello");
    expect(turn.finalResponse).toBe("hello from agent");
    expect(turn.items).toEqual([{ id: expect.any(String), type: "agent_message", text: "hello from agent" }]);
    expect(turn.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, cached_input_tokens: 0 });
    expect(thread.id).toMatch(/^[0-9a-f-]{36}$/);
    server.assertDone();
  });

  test("runStreamed: thread.started, turn.started, a command started and completed, the answer, turn.completed", async () => {
    const { server, codex, options } = codexSetup(
      [{ toolCalls: [{ id: "call_ls", name: "shell", arguments: { command: "ls" } }] }, { text: "one file", check: (r) => expect(String(r.body.messages.at(-1)?.content)).toContain("a.txt") }],
      { "a.txt": "a\n" },
    );
    const thread = codex.startThread({ ...options, sandboxMode: "workspace-write" });
    const { events } = await thread.runStreamed("list the files");
    const seen: ThreadEvent[] = [];
    for await (const event of events) seen.push(event);
    expect(seen.map((event) => (event.type.startsWith("item.") && "item" in event ? `${event.type}:${event.item.type}` : event.type))).toEqual([
      "thread.started",
      "turn.started",
      "item.started:command_execution",
      "item.completed:command_execution",
      "item.completed:agent_message",
      "turn.completed",
    ]);
    const command = seen.find((event) => event.type === "item.completed" && event.item.type === "command_execution");
    expect(command).toMatchObject({ item: { command: "ls", exit_code: 0, status: "completed", aggregated_output: expect.stringContaining("a.txt") } });
    server.assertDone();
  });

  test("workspace-write: a new file is written (file_change add), an existing one edited (update)", async () => {
    const { server, workspace, codex, options } = codexSetup(
      [
        // An edit needs the file read first.
        { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "a.txt" } }] },
        {
          toolCalls: [
            { id: "call_new", name: "write_file", arguments: { path: "notes.txt", content: "new notes\n" } },
            { id: "call_old", name: "edit_file", arguments: { path: "a.txt", old_string: "old", new_string: "new" } },
          ],
        },
        { text: "done" },
      ],
      { "a.txt": "old line\n" },
    );
    const turn = await codex.startThread({ ...options, sandboxMode: "workspace-write" }).run("write notes and fix a.txt");
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("new notes\n");
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("new line\n");
    const changes = turn.items.filter((item) => item.type === "file_change");
    expect(changes).toEqual([
      { id: expect.any(String), type: "file_change", changes: [{ path: "notes.txt", kind: "add" }], status: "completed" },
      { id: expect.any(String), type: "file_change", changes: [{ path: "a.txt", kind: "update" }], status: "completed" },
    ]);
    server.assertDone();
  });

  test("a thread's second run and resumeThread continue the same session", async () => {
    const { server, codex, options } = codexSetup([
      { text: "noted 7", check: (r) => expect(userTexts(r)).toEqual(["remember 7"]) },
      { text: "it was 7", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "which number?"]) },
      { text: "still 7", check: (r) => expect(userTexts(r)).toEqual(["remember 7", "which number?", "and now?"]) },
    ]);
    const thread = codex.startThread(options);
    await thread.run("remember 7");
    expect((await thread.run("which number?")).finalResponse).toBe("it was 7");
    const again = codex.resumeThread(thread.id!, options);
    expect((await again.run("and now?")).finalResponse).toBe("still 7");
    expect(again.id).toBe(thread.id);
    server.assertDone();
  });

  test("abort: the run rejects, the process ends and frees the session for the thread's next run", async () => {
    const arrived = signal();
    const release = signal();
    const { server, codex, options } = codexSetup([
      { text: "a long answer that never ends", check: () => arrived.resolve(), hold: { afterChunks: 1, until: release.promise } },
      { text: "after the abort", check: (r) => expect(userTexts(r).at(-1)).toBe("try again") },
    ]);
    const thread = codex.startThread(options);
    const controller = new AbortController();
    const running = thread.run("write a long answer", { signal: controller.signal });
    try {
      await arrived.promise;
      controller.abort();
      await expect(running).rejects.toThrow();
    } finally {
      release.resolve();
    }
    expect(thread.id).not.toBeNull();
    // The aborted run's process has let go of the session: resuming it works at once.
    expect((await thread.run("try again")).finalResponse).toBe("after the abort");
    server.assertDone();
  });

  test("outputSchema: the schema reaches the model and the final response is the JSON that satisfies it", async () => {
    const schema = { type: "object", properties: { count: { type: "integer" } }, required: ["count"], additionalProperties: false };
    const { server, codex, options } = codexSetup([
      { text: '{"count": 3}', check: (r) => expect(userTexts(r).at(-1)).toContain('"required":["count"]') },
    ]);
    const turn = await codex.startThread(options).run("how many files?", { outputSchema: schema });
    expect(JSON.parse(turn.finalResponse)).toEqual({ count: 3 });
    server.assertDone();
  });
});
