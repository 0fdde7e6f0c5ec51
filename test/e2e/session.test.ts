import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { onPty, terminalsKilledAfterEach } from "./terminals.ts";

// `agent` with no command on a real pseudo-terminal (Bun's PTY): the user types,
// the Lead answers, a teammate's result arrives as an event turn while the
// prompt waits and is printed above it; Ctrl-C interrupts a turn, `exit` ends.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

function onTerminal(
  script: ScriptedReply[],
  mode = "acceptEdits",
  extraArgs: string[] = [],
  given?: { server: ReturnType<typeof startServer>; setup: ReturnType<typeof teamSetup> },
) {
  const server = given?.server ?? startServer(script);
  const setup = given?.setup ?? teamSetup();
  const pty = onPty(
    terminals,
    [AGENT_BINARY, ...extraArgs, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", mode],
    { OPENAI_API_KEY: "test-key" },
  );
  return { server, setup, ...pty };
}

describe("agent on a terminal: an interactive session", () => {
  test("a request, the teammate's result as an event turn between inputs, exit", async () => {
    const t = onTerminal([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }], delayMs: 300 },
      { identity: "alice", text: "notes.txt written" },
      { identity: "lead", text: "alice finished: notes.txt is written." },
    ]);
    let at = await t.until("> ");
    t.type("have alice write notes.txt\r");
    at = await t.until("alice is on it.", at);
    // Printed while the prompt waits for the next request.
    at = await t.until("[lead] event turn: result from alice", at);
    at = await t.until("alice finished: notes.txt is written.", at);
    await t.until("> ", at);
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    t.server.assertDone();
    expect(await Bun.file(join(t.setup.workspace, "notes.txt")).text()).toBe("notes\n");
    expect(existsSync(join(t.setup.sessionDir(), "runtime.lock"))).toBe(false);
  }, 30_000);

  test("the answer to a request streams in: half of it is on screen while the rest is held back, and it is printed once", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = onTerminal([{ identity: "lead", text: "Streaming into the session now.", hold: { afterChunks: 3, until: held } }]);
    let at = await t.until("> ");
    t.type("stream something\r");
    at = await t.until("Streaming into ", at);
    expect(t.screen().slice(at)).not.toContain("now.");
    release();
    at = await t.until("the session now.", at);
    await t.until("> ", at);
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    expect(t.screen().split("Streaming into the session now.").length).toBe(2);
    t.server.assertDone();
  }, 30_000);

  test("Ctrl-C interrupts the turn in progress and the session goes on; Ctrl-D ends it", async () => {
    const t = onTerminal([
      { identity: "lead", text: "too slow", delayMs: 10_000 },
      { identity: "lead", text: "fast answer." },
    ]);
    let at = await t.until("> ");
    t.type("think hard\r");
    await t.until("think hard", at);
    await Bun.sleep(300);
    t.type("\x03");
    at = await t.until("agent: the turn ended with error_interrupted", at);
    at = await t.until("> ", at);
    t.type("again\r");
    at = await t.until("fast answer.", at);
    await t.until("> ", at);
    t.type("\x04");
    expect(await t.child.exited).toBe(0);
    t.server.assertDone();
  }, 30_000);

  test("each session is new; agent -c continues the most recent one", async () => {
    const first = onTerminal([{ identity: "lead", text: "noted." }, { identity: "lead", text: "it was 4711." }]);
    let at = await first.until("> ");
    expect(first.screen()).toMatch(/session [0-9a-f-]{36} with the Lead in /);
    first.type("remember the code 4711\r");
    at = await first.until("noted.", at);
    await first.until("> ", at);
    first.type("exit\r");
    expect(await first.child.exited).toBe(0);

    const again = onTerminal([], "acceptEdits", ["-c"], { server: first.server, setup: first.setup });
    at = await again.until("> ");
    again.type("which code?\r");
    at = await again.until("it was 4711.", at);
    await again.until("> ", at);
    again.type("exit\r");
    expect(await again.child.exited).toBe(0);
    expect(JSON.stringify(first.server.requests[1]?.body.messages)).toContain("remember the code 4711");
    first.server.assertDone();
    const listed = await first.setup.agent("sessions", "list", "--json");
    expect(JSON.parse(listed.stdout).sessions).toMatchObject([{ first_prompt: "remember the code 4711", state: "idle" }]);
  }, 30_000);
});

describe("permission questions in a session", () => {
  test("a write shows its diff; a (always) stops the second identical question", async () => {
    const t = onTerminal(
      [
        // A file is read before it is written over (docs/files.md#versions).
        { identity: "lead", toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] },
        { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "new line\n" } }] },
        { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "newer line\n" } }] },
        { identity: "lead", text: "notes.txt rewritten twice." },
      ],
      "default",
    );
    writeFileSync(join(t.setup.workspace, "notes.txt"), "old line\n");
    let at = await t.until("> ");
    t.type("rewrite notes.txt\r");
    at = await t.until("lead wants to run write_file (edit):", at);
    at = await t.until("-old line", at);
    at = await t.until("+new line", at);
    at = await t.until("(a adds: write_file(notes.txt))", at);
    at = await t.until("[N]ever this session", at);
    t.type("a\r");
    at = await t.until("added allow rule for this session: write_file(notes.txt)", at);
    at = await t.until("notes.txt rewritten twice.", at);
    await t.until("> ", at);
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    t.server.assertDone();
    expect(t.screen().split("wants to run write_file").length).toBe(2);
    expect(await Bun.file(join(t.setup.workspace, "notes.txt")).text()).toBe("newer line\n");
  }, 30_000);

  test("N (never) denies the next identical call without asking; e sends the reason to the model", async () => {
    const denial = (request: RecordedRequest) => {
      const last = request.body.messages.at(-1) as { role: string; content: string };
      expect(last.role).toBe("tool");
      return last.content;
    };
    const t = onTerminal(
      [
        { identity: "lead", toolCalls: [{ name: "shell", arguments: { command: "touch made-by-shell" } }] },
        { identity: "lead", toolCalls: [{ name: "shell", arguments: { command: "touch made-by-shell" } }] },
        {
          identity: "lead",
          toolCalls: [{ name: "shell", arguments: { command: "rm -f other" } }],
          check: (request) => expect(denial(request)).toContain('matches the deny rule "shell(touch made-by-shell)"'),
        },
        {
          identity: "lead",
          text: "I will leave it.",
          check: (request) => expect(denial(request)).toContain("the user says: keep other"),
        },
      ],
      "default",
    );
    let at = await t.until("> ");
    t.type("touch it\r");
    at = await t.until("lead wants to run shell (execute):", at);
    at = await t.until("command: touch made-by-shell", at);
    at = await t.until(`in: ${t.setup.workspace}`, at);
    t.type("N\r");
    at = await t.until("added deny rule for this session: shell(touch made-by-shell)", at);
    at = await t.until("command: rm -f other", at);
    t.type("e\r");
    at = await t.until("why not? (sent to the model): ", at);
    t.type("keep other\r");
    at = await t.until("I will leave it.", at);
    await t.until("> ", at);
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    t.server.assertDone();
    expect(t.screen().split("command: touch made-by-shell").length).toBe(2);
    expect(existsSync(join(t.setup.workspace, "made-by-shell"))).toBe(false);
  }, 30_000);
});

describe("session commands on a terminal", () => {
  test("/team (completed with Tab) lists the teammate at work; @ and Tab complete its name", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const t = onTerminal([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }], hold: { afterChunks: 0, until: held } },
      { identity: "alice", text: "notes.txt written" },
      { identity: "lead", text: "alice finished." },
    ]);
    let at = await t.until("> ");
    t.type("have alice write notes.txt\r");
    at = await t.until("alice is on it.", at);
    at = await t.until("> ", at);
    t.type("/te\t");
    at = await t.until("/team ", at);
    t.type("\r");
    at = await t.until("alice (writer)  running  thinking", at);
    // The list is open (a marker to move, Enter to view); Esc closes it and the prompt comes back.
    at = await t.until("↑/↓ choose, Enter view, Esc close", at);
    t.type("\x1b");
    at = await t.until("> ", at);
    t.type("@al\t");
    at = await t.until("@alice ", at);
    // Erase what was typed: Ctrl-U.
    t.type("\x15");
    release();
    at = await t.until("alice finished.", at);
    await t.until("> ", at);
    t.type("/exit\r");
    expect(await t.child.exited).toBe(0);
    t.server.assertDone();
  }, 30_000);
});
