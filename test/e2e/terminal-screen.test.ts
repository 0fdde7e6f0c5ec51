import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { AGENT_BINARY } from "./agent-binary.ts";
import { lastToolResult, scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";
import { type ScreenSize, onXterm } from "./xterm-screen.ts";
import { HistoryRecord } from "../../src/runtime/history-store.ts";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";

// `agent run` on a real pseudo-terminal read through a headless xterm.js: what
// a person sees at several widths — a permission question stays on screen
// while the team's status block would tick, one key answers it, and a terminal
// that reports 0 columns still gets whole lines.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();
const QUESTION = "lead wants to run write_file (edit):";
/** The widths every screen test runs at: narrow, usual, wide, and a terminal that reports 0 columns. */
const SIZES: ScreenSize[] = [
  { cols: 80, rows: 24 },
  { cols: 40, rows: 24 },
  { cols: 200, rows: 50 },
  { cols: 80, rows: 24, reportedCols: 0 },
];
/** A row of the status block: an agent, two spaces, its state. */
const STATUS_ROW = /^(lead|alice \(writer\)|bob \(tester\))  (working|idle|running)  /;
const label = (size: ScreenSize) => `${size.cols}×${size.rows}${size.reportedCols === undefined ? "" : ` reporting ${size.reportedCols} columns`}`;
type HistoryMessage = { role: string; content?: unknown; toolCalls?: { id: string }[]; tool_calls?: { id: string }[]; toolCallId?: string; tool_call_id?: string };

/** The Lead's history as the session left it: every line through the schema (a bad line throws), snapshots replacing what came before. */
function historyMessages(stateDir: string): HistoryMessage[] {
  const sessions = join(stateDir, "sessions");
  const [id] = readdirSync(sessions);
  const lines = readFileSync(join(sessions, id!, "agents", "lead.jsonl"), "utf8").split("\n").filter((line) => line !== "");
  let messages: HistoryMessage[] = [];
  for (const line of lines) {
    const record = HistoryRecord.parse(JSON.parse(line));
    if (record.type === "message") messages.push(record.message);
    else if (record.type === "snapshot") messages = [...record.messages];
  }
  return messages;
}

/** Tool call ids with no result after them (the history's shape, or the wire's). */
function danglingCalls(messages: HistoryMessage[]): string[] {
  const answered = new Set(messages.map((message) => message.toolCallId ?? message.tool_call_id).filter((id) => id !== undefined));
  return messages.flatMap((message) => [...(message.toolCalls ?? []), ...(message.tool_calls ?? [])].map((call) => call.id)).filter((id) => !answered.has(id));
}

/** A teammate's idle notice may reach the Lead with her result or in an event turn of its own: that turn, if any, is answered here. */
function idleNoticeOnly(request: RecordedRequest): ScriptedReply {
  const last = String(request.body.messages.at(-1)?.content ?? "");
  if (request.identity !== "lead" || !last.includes('"kind":"idle"')) throw new Error(`unscripted request from ${request.identity}: ${last.slice(0, 200)}`);
  return { identity: "lead", text: "noted." };
}

/** The visible rows without the empty ones at the bottom. */
function visible(rows: string[]): string[] {
  const shown = rows.map((row) => row.trimEnd());
  while (shown.length > 0 && shown.at(-1) === "") shown.pop();
  return shown;
}

/** The Lead spawns alice and bob (each held at its first request until released), then asks to write notes.txt. */
function teamThenEdit() {
  const alice = Promise.withResolvers<void>();
  const bob = Promise.withResolvers<void>();
  const server = startServer([
    {
      identity: "lead",
      toolCalls: [
        { name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } },
        { name: "spawn_teammate", arguments: { name: "bob", role: "tester", prompt: "check b.txt" } },
      ],
    },
    { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }] },
    { identity: "alice", text: "alice done", gate: alice.promise },
    { identity: "bob", text: "bob done", gate: bob.promise },
    { identity: "lead", text: "edit refused; waiting for the team.", check: (r) => expect(lastToolResult(r)).toContain("denied") },
    { identity: "lead", text: "alice reported." },
    { identity: "lead", text: "bob reported." },
  ]);
  return { server, alice, bob };
}

function agentRun(setup: ReturnType<typeof teamSetup>, url: string, size: ScreenSize, mode = "default") {
  return onXterm(
    terminals,
    [AGENT_BINARY, "run", "write notes.txt with the team", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", url, "--permission-mode", mode],
    { OPENAI_API_KEY: "test-key" },
    size,
  );
}

describe("agent run on a terminal, as the screen shows it", () => {
  for (const size of SIZES) {
    test(`${label(size)}: the question stays visible while two teammates work; n without Enter denies; the block comes back and is erased before the answer`, async () => {
      const { server, alice, bob } = teamThenEdit();
      const setup = teamSetup();
      const t = agentRun(setup, server.url, size);
      await t.waitFor(QUESTION);
      await t.waitFor("tell the model why: ");
      // The status block redraws every second: two redraws later the question is still whole.
      await Bun.sleep(2500);
      const shown = (await t.waitFor(QUESTION)).replace(/\n/g, "");
      expect(shown).toContain("[e] no and tell the model why:");
      expect(shown).toContain("+notes");
      t.type("n");
      await t.waitFor("edit refused; waiting for the team.", t.all);
      // The block is back below the log while the teammates still work.
      const after = await t.waitFor(/alice \(writer\)\s+running/);
      expect(after).toMatch(/bob \(tester\)\s+running/);
      alice.resolve();
      await t.waitFor("alice reported.", t.all);
      bob.resolve();
      expect(await t.child.exited).toBe(0);
      server.assertDone();
      expect(existsSync(join(setup.workspace, "notes.txt"))).toBe(false);
      // The last bytes may come in after the exit: the answer is the end of the screen once they have.
      await t.waitFor(/bob reported\.\s*$/, t.all);
      const log = visible(t.all());
      // Asked once: a redraw never printed it twice.
      expect(log.join("\n").split(QUESTION).length).toBe(2);
      // Every drawing of the block was erased, the last one before the answer, which ends the screen.
      expect(log.filter((row) => STATUS_ROW.test(row))).toEqual([]);
      expect(log.at(-1)).toBe("bob reported.");
    }, 40_000);
  }

  test("a terminal reporting 0 columns: the status block's lines are whole, not cut to ten characters", async () => {
    const alice = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "alice done", gate: alice.promise },
      { identity: "lead", text: "alice reported." },
    ]);
    const setup = teamSetup();
    const t = agentRun(setup, server.url, { cols: 80, rows: 24, reportedCols: 0 }, "acceptEdits");
    await t.waitFor(/alice \(writer\)\s+running/);
    alice.resolve();
    await t.waitFor("alice reported.", t.all);
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 30_000);
});

describe("Ctrl-C and questions on a terminal, as the screen shows them", () => {
  const size = { cols: 80, rows: 24 };
  const session = (setup: ReturnType<typeof teamSetup>, url: string, mode = "acceptEdits", screen: ScreenSize = size) =>
    onXterm(
      terminals,
      [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", url, "--permission-mode", mode],
      { OPENAI_API_KEY: "test-key" },
      screen,
    );

  for (const screen of SIZES) {
  test(`${label(screen)}: at the prompt, the first Ctrl-C clears the half-typed line and the session goes on; a second within 2 s leaves with 0`, async () => {
    const server = startServer([{ identity: "lead", text: "hello back.", check: (r) => expect(JSON.stringify(r.body.messages.at(-1))).toContain("hello") }]);
    const t = session(teamSetup(), server.url, "acceptEdits", screen);
    await t.waitFor("> ");
    t.type("half typed");
    await t.waitFor("> half typed");
    t.type("\x03");
    await t.waitFor("Ctrl-C again within 2 s to leave");
    await t.settled();
    expect(t.rows().join("\n")).not.toContain("half typed");
    // The note above, the empty prompt below it.
    expect(visible(t.rows()).at(-1)).toBe(">");
    // Past the 2 s, a Ctrl-C is a first one again.
    await Bun.sleep(2100);
    t.type("hello\r");
    // The turn is over once the prompt is back (a Ctrl-C before that cancels the turn instead).
    await t.waitFor(/hello back\.\n> *(\n *)*$/);
    t.type("\x03");
    await t.waitFor(/Ctrl-C again within 2 s to leave[^]*Ctrl-C again within 2 s to leave/);
    t.type("\x03");
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 30_000);
  }

  test("mid-turn: Ctrl-C cancels the turn, its note starts a line of its own, the history stays valid and the next request works", async () => {
    const held = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", text: "Streaming into the session now.", hold: { afterChunks: 3, until: held.promise } },
      {
        identity: "lead",
        text: "second answer.",
        check: (r) => {
          const last = r.body.messages.at(-1)!;
          expect(last.role).toBe("user");
          expect(JSON.stringify(last.content)).toContain("go on");
        },
      },
    ]);
    const t = session(teamSetup(), server.url);
    await t.waitFor("> ");
    t.type("first\r");
    await t.waitFor("Stream");
    t.type("\x03");
    await t.waitFor(/^agent: the turn ended with error_interrupted/m);
    held.resolve();
    await t.waitFor(/^> $/m);
    t.type("go on\r");
    await t.waitFor("second answer.");
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 30_000);

  for (const when of ["while its shell command runs", "while the reply naming a tool call streams"] as const) {
    test(`mid-turn, ${when}: Ctrl-C cancels the turn, the history file parses with no tool call left without its result, the next prompt works`, async () => {
      const held = Promise.withResolvers<void>();
      const sleep = { name: "shell", arguments: { command: "sleep 30" } };
      const first: ScriptedReply =
        when === "while its shell command runs"
          ? { identity: "lead", toolCalls: [sleep] }
          : { identity: "lead", text: "Sleeping on it now.", toolCalls: [sleep], hold: { afterChunks: 3, until: held.promise } };
      const server = startServer([
        first,
        {
          identity: "lead",
          text: "second answer.",
          check: (r) => {
            expect(danglingCalls(r.body.messages as HistoryMessage[])).toEqual([]);
            expect(JSON.stringify(r.body.messages.at(-1))).toContain("go on");
          },
        },
      ]);
      const setup = teamSetup();
      const t = onXterm(
        terminals,
        [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits", "--allow", "shell(sleep*)"],
        { OPENAI_API_KEY: "test-key" },
        size,
      );
      await t.waitFor("> ");
      t.type("sleep on it\r");
      await t.waitFor(when === "while its shell command runs" ? "[lead] shell" : "Sleep");
      t.type("\x03");
      await t.waitFor(/^agent: the turn ended with error_interrupted/m);
      held.resolve();
      await t.waitFor(/^> $/m);
      t.type("go on\r");
      await t.waitFor("second answer.");
      t.type("exit\r");
      expect(await t.child.exited).toBe(0);
      server.assertDone();
      const messages = historyMessages(setup.stateDir);
      expect(messages.length).toBeGreaterThan(0);
      expect(danglingCalls(messages)).toEqual([]);
      expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "second answer." });
    }, 40_000);
  }

  test("mid-turn: a second Ctrl-C within 2 s ends the session with 130", async () => {
    const held = Promise.withResolvers<void>();
    const server = startServer([{ identity: "lead", text: "Streaming into the session now.", hold: { afterChunks: 3, until: held.promise } }]);
    const t = session(teamSetup(), server.url);
    await t.waitFor("> ");
    t.type("first\r");
    await t.waitFor("Stream");
    t.type("\x03");
    await Bun.sleep(200);
    t.type("\x03");
    expect(await t.child.exited).toBe(130);
    held.resolve();
    await t.waitFor("the session was interrupted (Ctrl-C twice)", t.all);
  }, 30_000);

  for (const size of SIZES) {
    test(`${label(size)}: typing /team while alice's question arrives: the question shows above the half-typed line, the command runs, then the question is asked and answered on its own`, async () => {
      const gate = Promise.withResolvers<void>();
      const server = startServer([
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes.txt" } }] },
        { identity: "lead", text: "alice is on it." },
        { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }], gate: gate.promise },
        { identity: "alice", text: "notes.txt written" },
        { identity: "lead", text: "alice wrote notes.txt." },
      ], { respond: idleNoticeOnly });
      const setup = teamSetup();
      const notes = join(setup.workspace, "notes.txt");
      const t = session(setup, server.url, "default", size);
      await t.waitFor("> ");
      t.type("have alice write notes.txt\r");
      await t.waitFor("alice is on it.");
      await t.waitFor(/^> $/m);
      t.type("/te");
      await t.waitFor(/^> \/te$/m);
      gate.resolve();
      await t.waitFor("teammate alice wants to run");
      // The question printed above, then the half-typed line drawn again below it.
      await t.waitFor(/\+notes[^]*\n> \/te *(\n *)*$/);
      // The question is above; the half-typed line stays the last row, as typed, and is not taken as the answer.
      const shown = visible(t.rows());
      expect(shown.at(-1)).toBe("> /te");
      expect(shown.findIndex((row) => row.includes("alice wants to run"))).toBeLessThan(shown.length - 1);
      expect(shown.join("\n")).not.toContain("allow? [y]es");
      t.type("am\r");
      // The command ran (its row for alice) while the question was still unanswered; then the question took the input.
      await t.waitFor(/allow\? \[y\]es/);
      const log = t.all().join("\n");
      expect(log.indexOf("> /team")).toBeGreaterThan(log.indexOf("alice wants to run"));
      expect(log.search(/alice \(writer\)\s+running/)).toBeGreaterThan(log.indexOf("> /team"));
      expect(log.lastIndexOf("allow? [y]es")).toBeGreaterThan(log.search(/alice \(writer\)\s+running/));
      expect(existsSync(notes)).toBe(false);
      // One key answers it, without Enter.
      t.type("y");
      await t.waitFor("alice wrote notes.txt.", t.all);
      await t.waitFor(/^> $/m);
      t.type("exit\r");
      expect(await t.child.exited).toBe(0);
      server.assertDone();
      expect(await Bun.file(notes).text()).toBe("notes\n");
    }, 40_000);
  }

  test("agent run stopped by Ctrl-C during the Lead's own turn while alice works: the agent drain hint, exit 130", async () => {
    const held = Promise.withResolvers<void>();
    const alice = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }] },
      { identity: "lead", text: "Waiting on alice while I think.", hold: { afterChunks: 3, until: held.promise } },
      { identity: "alice", text: "alice done", gate: alice.promise },
    ]);
    const setup = teamSetup();
    const t = agentRun(setup, server.url, size, "acceptEdits");
    await t.waitFor("[alice] running (writer)", t.all);
    await t.waitFor("Waiting on");
    t.type("\x03");
    expect(await t.child.exited).toBe(130);
    held.resolve();
    alice.resolve();
    await t.waitFor(/agent: interrupted: alice still working .*agent drain --session [0-9a-f-]{36}/, () => [t.all().join("")]);
  }, 30_000);
});

describe("agent run cut by Ctrl-C mid-answer, as the screen shows it", () => {
  test("the error line starts a line of its own, not glued to the half-printed answer", async () => {
    const held = Promise.withResolvers<void>();
    const server = startServer([{ identity: "lead", text: "Streaming an answer that is cut short.", hold: { afterChunks: 3, until: held.promise } }]);
    const t = agentRun(teamSetup(), server.url, { cols: 80, rows: 24 }, "acceptEdits");
    await t.waitFor("Stream");
    t.type("\x03");
    expect(await t.child.exited).toBe(130);
    held.resolve();
    await t.waitFor(/^agent: run ended with error_interrupted/m, t.all);
  }, 30_000);
});

describe("a question takes only what was typed for it", () => {
  /** The Lead asks to write notes.txt twice (the second time is allowed by the first answer's rule, if any). */
  function editTwice() {
    return startServer([
      { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }] },
      { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "again\n" } }] },
      { identity: "lead", text: "done asking." },
    ]);
  }
  const run = (setup: ReturnType<typeof teamSetup>, url: string) =>
    onXterm(terminals, [AGENT_BINARY, "run", "write notes.txt", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", url, "--permission-mode", "default"], { OPENAI_API_KEY: "test-key" }, { cols: 160, rows: 40 });

  test("agent run: a sentence typed into the question answers nothing, and a alone adds no rule until Enter", async () => {
    const server = editTwice();
    const setup = teamSetup();
    const t = run(setup, server.url);
    await t.waitFor("tell the model why:");
    // Typed as one burst, as a person typing a request for the prompt does: its 'a' is no answer.
    t.type("add a readme");
    await t.waitFor("add a readme");
    t.type("\r");
    await t.waitFor("not an answer: type y, n or e, or a or N then Enter:");
    expect(existsSync(join(setup.workspace, "notes.txt"))).toBe(false);
    // 'a' alone waits for Enter: erased, it was nothing; then n denies this call only.
    // Each key on its own, as a person presses them (keys arriving together are typed text).
    t.type("a");
    await t.waitFor("then Enter: a");
    t.type("\x7f");
    await t.waitFor(/then Enter:\s*$/m);
    t.type("n");
    await t.waitFor(/tell the model why:[^]*tell the model why:/, t.all);
    // The second call is asked again: no rule was added. Now a and Enter add it.
    t.type("a\r");
    await t.waitFor("added allow rule for this session", t.all);
    expect(await t.child.exited).toBe(0);
    server.assertDone();
    expect(readFileSync(join(setup.workspace, "notes.txt"), "utf8")).toBe("again\n");
    const log = t.all().join("\n");
    expect(log.split("added allow rule").length).toBe(2);
    expect(log.split(QUESTION).length).toBe(3);
  }, 40_000);
});

describe("a permission question in the session, as the screen shows it", () => {
  test("n without Enter denies the Lead's edit; the prompt comes back", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }] },
      { identity: "lead", text: "not written, as you said.", check: (r) => expect(lastToolResult(r)).toContain("denied") },
    ]);
    const setup = teamSetup();
    const t = onXterm(
      terminals,
      [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", "default"],
      { OPENAI_API_KEY: "test-key" },
      { cols: 80, rows: 24 },
    );
    await t.waitFor("> ");
    t.type("write notes.txt\r");
    await t.waitFor("tell the model why: ");
    t.type("n");
    await t.waitFor("not written, as you said.");
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    server.assertDone();
    expect(existsSync(join(setup.workspace, "notes.txt"))).toBe(false);
  }, 30_000);
});
