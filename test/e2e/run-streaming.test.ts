import { describe, expect, test } from "bun:test";
import { AGENT_BINARY } from "./agent-binary.ts";
import { expectOneLineError, parseStream, runSetup, scriptedServers } from "./run-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";

// `agent run` streams: on a real pseudo-terminal (Bun's PTY) the Lead's answer
// shows while the model is still writing it; piped, stdout is exactly the answer.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

describe("agent run on a terminal", () => {
  test("the answer shows as it arrives: half of it is on screen while the rest is held back", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = startServer([
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "hi\n" } }] },
      // Chunks: the role, "Wrote ", "notes.txt ", then held; "for you." after the release.
      { text: "Wrote notes.txt for you.", hold: { afterChunks: 3, until: held } },
    ]);
    const { workspace, stateDir } = runSetup();
    let screen = "";
    const decoder = new TextDecoder();
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "write notes", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits"],
      {
        env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" },
        terminal: { cols: 120, rows: 30, data: (_terminal, data) => (screen += decoder.decode(data, { stream: true })) },
      },
    );
    terminals.push(child);
    const deadline = Date.now() + 15_000;
    while (!screen.includes("Wrote notes.txt ")) {
      if (Date.now() > deadline) throw new Error(`the first half never showed; the screen: ${JSON.stringify(screen)}`);
      await Bun.sleep(20);
    }
    // The barrier: the rest of the answer has not been sent yet.
    expect(screen).not.toContain("for you.");
    release();
    expect(await child.exited).toBe(0);
    const text = screen.replace(/\r/g, "");
    expect(text).toContain("Wrote notes.txt for you.\n");
    // Streamed once, not printed again at the end.
    expect(text.split("Wrote notes.txt for you.").length).toBe(2);
    server.assertDone();
  }, 30_000);
});

describe("agent run piped", () => {
  test("stdout is exactly the answer, though it was streamed", async () => {
    const server = startServer([
      { text: "Let me look.", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a\n" } }] },
      { text: "Done: a.txt has one line." },
    ]);
    const { run } = runSetup();
    const result = await run(["write a.txt", "--base-url", server.url, "--permission-mode", "acceptEdits", "--quiet"]);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "Done: a.txt has one line.\n", stderr: "" });
    expect(server.requests.every((request) => request.body.stream === true)).toBe(true);
    server.assertDone();
  });

  test("a stream cut halfway is retried: stdout is the whole answer of the retry only", async () => {
    const server = startServer([{ text: "This one is cut off", cut: { afterChunks: 3 } }, { text: "The real answer." }]);
    const { run } = runSetup();
    const result = await run(["hi", "--base-url", server.url]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("The real answer.\n");
    expect(result.stderr).toMatch(/^\[lead\] model request failed \(the answer stream was cut before it finished\); retry 1 in \d+\.\d s\n$/);
    server.assertDone();
  });

  test("--include-partial-messages: assistant_delta lines before each whole reply; none without it", async () => {
    const server = startServer([{ text: "Streamed in pieces." }, { text: "Not in pieces." }]);
    const { run } = runSetup();
    const partial = parseStream((await run(["hi", "--base-url", server.url, "--output", "stream-json", "--include-partial-messages"])).stdout);
    const types = partial.map((line) => line.type);
    expect(types).toEqual(["system", "user", "model_request", "assistant_delta", "assistant_delta", "assistant_delta", "assistant", "result"]);
    expect(partial.filter((line) => line.type === "assistant_delta").map((line) => (line as { text: string }).text)).toEqual([
      "Streamed ",
      "in ",
      "pieces.",
    ]);
    const whole = parseStream((await run(["again", "--base-url", server.url, "--output", "stream-json"])).stdout);
    expect(whole.some((line) => line.type === "assistant_delta")).toBe(false);
    server.assertDone();
  });

  test("--include-partial-messages without stream-json is a usage error", async () => {
    const { run } = runSetup();
    const result = await run(["hi", "--include-partial-messages"]);
    expectOneLineError(result, 2, /--include-partial-messages needs --output stream-json/);
  });
});
