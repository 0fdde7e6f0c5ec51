import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { eventEnvelope, eventFromMessage } from "../../src/core/runtime-event.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import type { RecordedRequest } from "../support/model-server.ts";
import { lastToolResult, parseResult, parseStream, scriptedServers } from "./run-fixture.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";

// What a stopped run leaves and `agent drain` finishes, on the compiled binary:
// --no-wait, a --timeout while the team works, a crash between the Lead's
// history append and its ack, and nothing at all.

const startServer = scriptedServers();
const spawnAlice = (prompt: string) => ({ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt } });
const lastEvent = (request: RecordedRequest) => eventsIn(request).at(-1);

async function leadCounts(agent: ReturnType<typeof teamSetup>["agent"]) {
  const listed = await agent("mailbox", "list", "--agent", "lead", "--json");
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout).agents[0] as { counts: Record<string, number>; messages: { state: string; sender: string; kind: string }[] };
}

/** How many messages of the Lead's history hold `text` (turn records name event ids too: not counted). */
function inLeadHistory(stateDir: string, text: string): number {
  const records = readFileSync(join(stateDir, "agents", "lead.jsonl"), "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
  return records.filter((record) => record.type === "message" && String(record.message.content).includes(text)).length;
}

describe("--no-wait, then agent drain", () => {
  test("the run returns after the user turn, alice's result waits ready in the Lead's mailbox, drain answers it once", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [spawnAlice("count the tables")] },
      // A slow model: alice reports while the user turn is still going; the run must not take it in.
      { identity: "lead", text: "alice is counting.", delayMs: 1_500 },
      { identity: "alice", text: "there are 3 tables" },
    ]);
    const { run, drain, agent, sessionDir } = teamSetup();
    const result = await run(["count the tables with a teammate", "--no-wait", "--output", "json", "--base-url", server.url]);
    expect(result.code).toBe(0);
    const { session_id } = parseResult(result.stdout);
    expect(parseResult(result.stdout)).toMatchObject({
      result: "alice is counting.",
      events: 0,
      event_turns: 0,
      teammates: [{ name: "alice", role: "backend", state: "idle" }],
    });
    expect(result.stderr).toContain(
      `agent: not waiting for the team (--no-wait): 2 message(s) waiting for the Lead; run \`agent drain --session ${session_id}\` to continue\n`,
    );
    server.assertDone();
    const waiting = await leadCounts(agent);
    // Her result and the idle notice after it.
    expect(waiting.counts).toEqual({ ready: 2, processing: 0, done: 0, quarantine: 0 });
    expect(waiting.messages).toMatchObject([
      { state: "ready", sender: "alice", kind: "result" },
      { state: "ready", sender: "alice", kind: "idle" },
    ]);

    server.push({
      identity: "lead",
      text: "alice says there are 3 tables.",
      check: (request) =>
        expect(eventsIn(request)).toEqual([
          { from: "alice", kind: "result", content: "there are 3 tables" },
          { from: "alice", kind: "idle", content: "alice is idle" },
        ]),
    });
    const drained = await drain(["--output", "stream-json", "--base-url", server.url]);
    expect(drained.code).toBe(0);
    const lines = parseStream(drained.stdout);
    // The init line first, although restoring the team claimed the messages (her result, her idle notice) before it could be printed.
    expect(lines.slice(0, 4).map((l) => (l.type === "mailbox" ? `mailbox ${l.op}` : l.type))).toEqual(["system", "mailbox claim", "mailbox claim", "event"]);
    expect(lines[0]).not.toHaveProperty("idempotency_key");
    const json = lines.at(-1)!;
    expect(json).toMatchObject({ subtype: "success", result: "alice says there are 3 tables.", events: 2, event_turns: 1, turns: 1 });
    expect(json).not.toHaveProperty("idempotency_key");
    server.assertDone();
    expect((await leadCounts(agent)).counts).toEqual({ ready: 0, processing: 0, done: 2, quarantine: 0 });
    // The event's envelope, once.
    expect(inLeadHistory(sessionDir(), '"content":"there are 3 tables"')).toBe(1);
  });
});

describe("a run stopped while its team works, then agent drain", () => {
  test("--timeout while waiting: error_interrupted naming what is left; drain restores alice, finishes her task, answers", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [spawnAlice("write the report")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "too late", delayMs: 10_000 },
    ]);
    const { run, drain, agent } = teamSetup();
    const result = await run(["get a report", "--timeout", "1500ms", "--output", "json", "--base-url", server.url]);
    expect(result.code).toBe(1);
    const json = parseResult(result.stdout);
    expect(json).toMatchObject({ subtype: "error_interrupted", is_error: true, teammates: [{ name: "alice", state: "running" }] });
    expect(json.result).toBe(
      "timed out (--timeout 1500ms): stopped waiting for the team (alice still running); run `agent drain` to go on",
    );
    expect(result.stderr).toMatch(/^agent: run ended with error_interrupted: timed out \(--timeout 1500ms\)/m);

    const list = await agent("team", "list");
    expect(list.stdout).toMatch(/^alice +backend +running .* 1 +0 +0 +0 +stopped with its runtime; `agent drain` resumes it$/m);

    server.push(
      { identity: "alice", text: "report written" },
      { identity: "lead", text: "the report is written.", check: (r) => expect(eventsIn(r).find((e) => e.kind === "result")?.content).toBe("report written") },
    );
    const drained = await drain(["--base-url", server.url]);
    expect({ code: drained.code, stdout: drained.stdout }).toEqual({ code: 0, stdout: "the report is written.\n" });
    expect(drained.stderr).toContain("[alice] running (backend)\n");
    expect(drained.stderr).toContain("[lead] event turn: result from alice; alice is idle\n");
    server.assertDone();
  }, 30_000);
});

describe("agent drain and the interrupted run's permission flags", () => {
  /** `agent run --permission-mode acceptEdits` stopped while alice works; returns what drain needs. */
  async function stoppedAcceptEditsRun() {
    const server = startServer([
      { identity: "lead", toolCalls: [spawnAlice("write the report")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "too late", delayMs: 10_000 },
    ]);
    const setup = teamSetup();
    const result = await setup.run(["get a report", "--permission-mode", "acceptEdits", "--timeout", "1500ms", "--base-url", server.url]);
    expect(result.code).toBe(1);
    return { server, ...setup };
  }
  const aliceWrites = (check: (toolResult: string) => void) => [
    { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "report.md", content: "# Report\n" } }] },
    { identity: "alice", text: "report done", check: (r: RecordedRequest) => check(lastToolResult(r)) },
    { identity: "lead", text: "the report is done." },
  ];

  test("none given to drain: the recorded acceptEdits is wider than drain's own line and config, so it is named and not taken", async () => {
    const { server, drain, workspace, sessionDir } = await stoppedAcceptEditsRun();
    server.push(...aliceWrites((text) => expect(text).toContain("permission denied")));
    const drained = await drain(["--base-url", server.url]);
    expect({ code: drained.code, stdout: drained.stdout }).toEqual({ code: 0, stdout: "the report is done.\n" });
    expect(drained.stderr).toContain(
      `agent: warning: session ${basename(sessionDir())}: its last run was given --permission-mode acceptEdits, wider than this command line and your config allow; not taken: pass --permission-mode acceptEdits to agent drain to drain with them\n`,
    );
    expect(drained.stderr).not.toContain("last run's permissions");
    expect(existsSync(join(workspace, "report.md"))).toBe(false);
    server.assertDone();
  }, 30_000);

  test("a permission flag given to drain replaces them all", async () => {
    const { server, drain, workspace } = await stoppedAcceptEditsRun();
    server.push(...aliceWrites((text) => expect(text).toContain("permission denied")));
    // Not merged with the recorded acceptEdits: this line's own flags, the default mode.
    const drained = await drain(["--allow", "write_file(notes.md)", "--base-url", server.url]);
    expect(drained.code).toBe(0);
    expect(drained.stderr).not.toContain("last run's permissions");
    expect(existsSync(join(workspace, "report.md"))).toBe(false);
    server.assertDone();
  }, 30_000);

  test("a record someone else edited is not taken", async () => {
    const { server, drain, workspace, sessionDir } = await stoppedAcceptEditsRun();
    // Edited by hand (or in a copy pulled back): the seal no longer matches, so drain runs with the defaults.
    const flagsFile = join(sessionDir(), "run-flags.json");
    writeFileSync(flagsFile, readFileSync(flagsFile, "utf8").replace("acceptEdits", "bypassPermissions"));
    server.push(...aliceWrites((text) => expect(text).toContain("permission denied")));
    const drained = await drain(["--base-url", server.url]);
    expect(drained.code).toBe(0);
    expect(drained.stderr).not.toContain("last run's permissions");
    expect(existsSync(join(workspace, "report.md"))).toBe(false);
    server.assertDone();
  }, 30_000);
});

describe("agent drain takes the interrupted run's --add-dir directories", () => {
  /**
   * `agent run --add-dir ROOT/shared --permission-mode acceptEdits` stopped while
   * alice works, with the user's config at acceptEdits too (so the recorded mode
   * widens nothing and is taken); `env` is that user's, for drain.
   */
  async function stoppedRunWithSharedDir() {
    const server = startServer([
      { identity: "lead", toolCalls: [spawnAlice("write the shared report")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "too late", delayMs: 10_000 },
    ]);
    const setup = teamSetup();
    const shared = join(setup.root, "shared");
    mkdirSync(shared);
    const config = join(setup.root, "xdg");
    mkdirSync(join(config, "agent"), { recursive: true });
    writeFileSync(join(config, "agent", "config.json"), JSON.stringify({ permissionMode: "acceptEdits" }));
    const env = { XDG_CONFIG_HOME: config };
    const result = await setup.run(["get a report", "--add-dir", shared, "--permission-mode", "acceptEdits", "--timeout", "1500ms", "--base-url", server.url], { env });
    expect(result.code).toBe(1);
    // The session is that user's: this process (another session key) would take it for a foreign one.
    const sessions = readdirSync(join(setup.stateDir, "sessions"));
    expect(sessions).toHaveLength(1);
    return { server, shared, env, ...setup, sessionDir: () => join(setup.stateDir, "sessions", sessions[0]!) };
  }
  const aliceWritesShared = (path: string) => [
    { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path, content: "# Shared\n" } }] },
    { identity: "alice", text: "report done", check: (r: RecordedRequest) => expect(lastToolResult(r)).toContain("created ../shared/report.md") },
    { identity: "lead", text: "the report is done." },
  ];

  test("none given: alice writes in the added directory as in the run, and drain names it", async () => {
    const { server, drain, shared, sessionDir, env } = await stoppedRunWithSharedDir();
    server.push(...aliceWritesShared(join(shared, "report.md")));
    const drained = await drain(["--base-url", server.url], { env });
    expect({ code: drained.code, stdout: drained.stdout }).toEqual({ code: 0, stdout: "the report is done.\n" });
    expect(drained.stderr).toContain(
      `agent: session ${basename(sessionDir())}: draining with its last run's permissions: --permission-mode acceptEdits; directories: --add-dir ${shared}\n`,
    );
    expect(readFileSync(join(shared, "report.md"), "utf8")).toBe("# Shared\n");
    server.assertDone();
  }, 30_000);

  test("drain's own permission flags replace the recorded ones, the added directories stay", async () => {
    const { server, drain, shared, sessionDir, env } = await stoppedRunWithSharedDir();
    server.push(...aliceWritesShared("../shared/report.md"));
    const drained = await drain(["--permission-mode", "bypassPermissions", "--base-url", server.url], { env });
    expect(drained.code).toBe(0);
    expect(drained.stderr).toContain(`agent: session ${basename(sessionDir())}: draining with its last run's directories: --add-dir ${shared}\n`);
    expect(readFileSync(join(shared, "report.md"), "utf8")).toBe("# Shared\n");
    server.assertDone();
  }, 30_000);

  test("an added directory removed since: exit 2 naming it, nothing drained", async () => {
    const { drain, shared, sessionDir, env } = await stoppedRunWithSharedDir();
    rmSync(shared, { recursive: true });
    const drained = await drain(["--base-url", "http://127.0.0.1:9/v1"], { env });
    expect(drained.code).toBe(2);
    expect(drained.stderr).toContain(
      `agent: session ${basename(sessionDir())} was run with --add-dir ${shared}, which is no longer a directory; recreate it, then run agent drain again\n`,
    );
  }, 30_000);
});

describe("agent drain after a crash between the Lead's history append and its ack", () => {
  /** The state a killed runtime leaves: alice's result in the Lead's processing/ and already in its history. */
  async function crashedAfterAppend(stateDir: string, answered: boolean) {
    const store = new FileMailboxStore({ stateDir });
    const message = createMessage({ sender: "alice", recipient: "lead", kind: "result", content: "tests pass" }, { clock: systemClock, ids: uuidV7Source });
    await store.send(message);
    await store.claim("lead");
    const history = openFileHistory(stateDir, "lead");
    await history.beginTurn(message.id, [{ role: "user", content: eventEnvelope(eventFromMessage(message)) }], new Date());
    if (answered) {
      await history.appendMessages([{ role: "assistant", content: "good news" }], new Date());
      await history.finishTurn(message.id, new Date(), "success", "good news");
    }
    history.close();
    return message;
  }

  test("never answered: acked without a second append, then answered once", async () => {
    const server = startServer([
      { identity: "lead", text: "alice reports the tests pass.", check: (r) => expect(lastEvent(r)?.content).toBe("tests pass") },
    ]);
    const { drain, agent, newSessionDir } = teamSetup();
    const stateDir = newSessionDir();
    const message = await crashedAfterAppend(stateDir, false);
    const drained = await drain(["--output", "json", "--base-url", server.url]);
    expect(drained.code).toBe(0);
    expect(parseResult(drained.stdout)).toMatchObject({ result: "alice reports the tests pass.", events: 1, event_turns: 1 });
    server.assertDone();
    expect(server.requests[0]!.body.messages.filter((m) => String(m.content).includes(message.id))).toHaveLength(1);
    expect(inLeadHistory(stateDir, message.id)).toBe(1);
    expect((await leadCounts(agent)).counts).toEqual({ ready: 0, processing: 0, done: 1, quarantine: 0 });
  });

  test("already answered: only acked, no model call", async () => {
    const server = startServer([]);
    const { drain, agent, newSessionDir } = teamSetup();
    const stateDir = newSessionDir();
    const message = await crashedAfterAppend(stateDir, true);
    const drained = await drain(["--base-url", server.url]);
    expect({ code: drained.code, stdout: drained.stdout }).toEqual({ code: 0, stdout: "" });
    expect(drained.stderr).toBe("agent: acknowledged 1 event(s) the Lead had already answered; nothing else to do\n");
    server.assertDone();
    expect(inLeadHistory(stateDir, message.id)).toBe(1);
    expect((await leadCounts(agent)).counts).toEqual({ ready: 0, processing: 0, done: 1, quarantine: 0 });
  });
});

describe("agent drain with nothing to do", () => {
  test("text: nothing on stdout, one line on stderr, exit 0, no model call; json: zero events", async () => {
    const server = startServer([]);
    const { drain, stateDir: root, newSessionDir } = teamSetup();
    // No session at all: nothing to drain, nothing created.
    expect(await drain(["--base-url", server.url])).toEqual({
      code: 0,
      stdout: "",
      stderr: `agent: nothing to do: no session in ${root} has pending work\n`,
    });
    expect(existsSync(root)).toBe(false);
    const stateDir = newSessionDir();
    const text = await drain(["--base-url", server.url]);
    expect(text).toEqual({
      code: 0,
      stdout: "",
      stderr: `agent: nothing to do: no messages wait for the Lead in ${stateDir} and no teammate has work\n`,
    });
    const json = await drain(["--output", "json", "--quiet", "--base-url", server.url]);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(json.stdout)).toMatchObject({ subtype: "success", is_error: false, result: "", turns: 0, events: 0, event_turns: 0, teammates: [] });
    server.assertDone();
  });
});
