import { describe, expect, test } from "bun:test";
import { finalScreen } from "../support/screen.ts";
import { AGENT_BINARY, runAgent } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";

// `agent run` with a team on a real pseudo-terminal: the live team view is
// drawn below the log while alice works, and gone from the final screen; with
// stderr piped, the same run prints the plain lines it always did.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

function teamScript(held?: Promise<unknown>) {
  return [
    { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes.txt" } }] },
    { identity: "lead", text: "alice is on it." },
    {
      identity: "alice",
      toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }],
      ...(held ? { hold: { afterChunks: 0, until: held } } : {}),
    },
    { identity: "alice", text: "notes.txt written" },
    { identity: "lead", text: "Final: notes.txt is ready." },
  ];
}

describe("the live team view", () => {
  test("on a terminal: a line per agent while they work, erased before the final answer", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = startServer(teamScript(held));
    const { workspace, stateDir } = runSetup();
    let screen = "";
    const decoder = new TextDecoder();
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "have alice write notes", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits"],
      {
        env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1", TERM: "xterm" },
        terminal: { cols: 120, rows: 30, data: (_terminal, data) => (screen += decoder.decode(data, { stream: true })) },
      },
    );
    terminals.push(child);
    const deadline = Date.now() + 15_000;
    // alice's model request is held: she is running, thinking; the Lead has answered and waits.
    const shows = (lines: string[]) =>
      lines.some((line) => /^alice \(writer\) {2}running {2}thinking {2}\d+s$/.test(line)) &&
      lines.some((line) => /^lead {2}idle {2}\d+s {2}\d+ tokens$/.test(line));
    while (!shows(finalScreen(screen))) {
      if (Date.now() > deadline) throw new Error(`the team view never showed alice at work; the screen: ${JSON.stringify(finalScreen(screen))}`);
      await Bun.sleep(20);
    }
    // No colour with NO_COLOR.
    expect(screen).not.toContain("\x1b[2m");
    release();
    expect(await child.exited).toBe(0);
    const after = finalScreen(screen);
    expect(after).toContain("Final: notes.txt is ready.");
    expect(after).toContain("[alice] running (writer)");
    expect(after.filter((line) => /^(lead|alice \(writer\)) {2}/.test(line))).toEqual([]);
    server.assertDone();
  }, 30_000);

  test("piped: the plain lines, byte for byte as before", async () => {
    const server = startServer(teamScript());
    const { workspace, stateDir } = runSetup();
    const result = await runAgent(["run", "have alice write notes", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits"], {
      env: { OPENAI_API_KEY: "test-key" },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Final: notes.txt is ready.\n");
    // No control sequence at all, and the lines of today (alice's idle and the Lead's event turn race, so sorted).
    expect(result.stderr).not.toContain("\x1b");
    expect(result.stderr.endsWith("\n")).toBe(true);
    expect(result.stderr.split("\n").slice(0, -1).sort()).toEqual(
      [
        '[lead] spawn_teammate {"name":"alice","role":"writer","prompt":"write notes.txt"}',
        "[alice] running (writer)",
        '[alice] write_file {"path":"notes.txt","content":"notes\\n"}',
        "[alice] idle (writer)",
        "[lead] event turn: result from alice; alice is idle",
      ].sort(),
    );
    server.assertDone();
  }, 30_000);
});
