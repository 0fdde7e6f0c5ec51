import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { interactiveSession } from "../../../src/cli/session/command.ts";
import { loadSettings } from "../../../src/config/load.ts";
import { ANSWER_KEYS } from "../../../src/permissions/tty-asker.ts";
import { type ScriptedReply, ScriptedModelServer } from "../../support/model-server.ts";
import { SessionStore } from "../../../src/sessions/session-store.ts";
import { tempDir } from "../../support/temp-dir.ts";
import { resolveSandbox } from "../../../src/security/sandbox/sandbox.ts";

// The interactive session over piped streams (no terminal): user turns, event
// turns between them, permission questions answered through the session's own
// input. test/e2e/session.test.ts drives the binary on a real pseudo-terminal.

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function session(script: ScriptedReply[], permissionMode = "acceptEdits") {
  const server = ScriptedModelServer.start(script);
  servers.push(server);
  const unsandboxed = resolveSandbox({ mode: "danger-full-access", explicit: true, network: false, workspace: ".", agentDir: ".agent", stateRoot: ".agent" }).sandbox;
  const root = tempDir("agent-session-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const stateRoot = join(root, "state");
  const sessions = new SessionStore(stateRoot);
  const meta = sessions.create();
  const stateDir = sessions.dirOf(meta.id);
  const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
  const text = { out: "", err: "" };
  stdout.on("data", (chunk) => (text.out += chunk));
  stderr.on("data", (chunk) => (text.err += chunk));
  const done = interactiveSession(
    { workspace, startDir: "", addDirs: [], stateRoot, session: { kind: "existing", meta }, settings, warnings: [], waitLock: false, sandbox: unsandboxed, runFlags: {} },
    { stdin, stdout, stderr, terminal: false, verbose: false });
  /** Waits until `pattern` is in the output so far: the next line must not be typed ahead of it. */
  const until = async (stream: "out" | "err", pattern: string) => {
    const deadline = Date.now() + 10_000;
    while (!text[stream].includes(pattern)) {
      if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(pattern)} in std${stream}: ${JSON.stringify(text[stream])}`);
      await Bun.sleep(10);
    }
  };
  const type = (line: string) => stdin.write(`${line}\n`);
  return { server, workspace, stateDir, sessionId: meta.id, text, done, until, type, stdin };
}

const spawnAlice = { name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes" } };

describe("interactive session", () => {
  test("a teammate's result arrives as an event turn between inputs, never inside a user turn", async () => {
    const s = session([
      { identity: "lead", toolCalls: [spawnAlice] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "notes written", delayMs: 300 },
      // The user's second request is slow: alice reports while it runs.
      {
        identity: "lead",
        text: "second done.",
        delayMs: 800,
        check: (request) => expect(request.body.messages.filter((m) => String(m.content).startsWith('{"agent_event"'))).toEqual([]),
      },
      {
        identity: "lead",
        text: "alice finished: notes written.",
        check: (request) => {
          // Her result and the idle notice after it, in one event turn.
          const [answer, envelope, idle] = request.body.messages.slice(-3) as { role: string; content: string }[];
          expect(answer).toMatchObject({ role: "assistant", content: "second done." });
          expect(JSON.parse(envelope!.content)).toMatchObject({ agent_event: { from: "alice", kind: "result" }, content: "notes written" });
          expect(JSON.parse(idle!.content)).toMatchObject({ agent_event: { from: "alice", kind: "idle" }, content: "alice is idle" });
        },
      },
    ]);
    await s.until("err", "with the Lead in");
    s.type("have alice write notes");
    await s.until("out", "alice is on it.\n");
    s.type("second request");
    await s.until("out", "alice finished: notes written.\n");
    s.type("exit");
    await s.done;
    expect(s.text.out).toBe("alice is on it.\nsecond done.\nalice finished: notes written.\n");
    expect(s.text.err).toContain("[lead] event turn: result from alice; alice is idle\n");
    expect(s.text.err).toContain("[alice] running (writer)\n");
    s.server.assertDone();
    // The session owned the state dir, and gave it back.
    expect(existsSync(join(s.stateDir, "runtime.lock"))).toBe(false);
  });

  test("a permission question takes the next line: the y is an answer, not a request", async () => {
    const s = session(
      [
        { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "hi\n" } }] },
        { identity: "lead", text: "wrote a.txt." },
      ],
      "default",
    );
    s.type("write a.txt");
    await s.until("err", `allow? ${ANSWER_KEYS}: `);
    expect(s.text.err).toContain("lead wants to run write_file (edit):\n  write a.txt (a new file)\n  @@ -0,0 +1,1 @@\n  +hi\n");
    s.type("y");
    await s.until("out", "wrote a.txt.\n");
    s.stdin.end(); // Ctrl-D
    await s.done;
    expect(readFileSync(join(s.workspace, "a.txt"), "utf8")).toBe("hi\n");
    s.server.assertDone();
  });

  test("leaving while a teammate works says what is left for agent drain", async () => {
    const s = session([
      { identity: "lead", toolCalls: [spawnAlice] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "never seen", delayMs: 5_000 },
    ]);
    s.type("have alice write notes");
    await s.until("out", "alice is on it.\n");
    await s.until("err", "[alice] running (writer)");
    s.type("exit");
    await s.done;
    expect(s.text.err).toContain(
      `agent: session ended: alice still working (stopped now; the task stays in the mailbox); run \`agent drain --session ${s.sessionId}\` to continue\n`,
    );
  });
});

describe("session commands", () => {
  test("/help, an unknown command, /model, /todos, /tasks, /permissions with a rule added by a", async () => {
    const s = session(
      [
        {
          identity: "lead",
          toolCalls: [
            { name: "todo_write", arguments: { todos: [{ content: "write a.txt", status: "in_progress" }] } },
            { name: "create_task", arguments: { subject: "check a.txt", description: "read it back" } },
            { name: "write_file", arguments: { path: "a.txt", content: "hi\n" } },
          ],
        },
        { identity: "lead", text: "wrote a.txt." },
        { identity: "lead", text: "on the other model.", check: (request) => expect(request.body.model).toBe("other-model") },
      ],
      "default",
    );
    await s.until("err", "with the Lead in");
    s.type("/help");
    await s.until("err", "/permissions");
    expect(s.text.err).toContain("@NAME TEXT");
    s.type("/frobnicate");
    await s.until("err", "agent: unknown command /frobnicate; the commands are /help, /team, /tasks, /todos");
    s.type("write a.txt");
    await s.until("err", `allow? ${ANSWER_KEYS}: `);
    s.type("a");
    await s.until("out", "wrote a.txt.\n");
    s.type("/permissions");
    await s.until("err", "added this session (a): write_file(a.txt)");
    expect(s.text.err).toContain("mode: default\n");
    s.type("/todos");
    await s.until("err", "[>] write a.txt\n");
    s.type("/tasks");
    await s.until("err", "check a.txt");
    s.type("/model other-model");
    await s.until("err", "model: other-model from the next request on");
    s.type("go on");
    await s.until("out", "on the other model.\n");
    s.type("/exit");
    await s.done;
    s.server.assertDone();
    // None of the commands reached the model.
    expect(s.text.out).toBe("wrote a.txt.\non the other model.\n");
  });

  test("/team lists the teammates while they work; @name sends to one from the user", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const s = session([
      { identity: "lead", toolCalls: [spawnAlice] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "glob", arguments: { pattern: "*" } }], hold: { afterChunks: 0, until: held } },
      { identity: "alice", text: "notes written" },
      {
        identity: "alice",
        text: "shorter notes",
        check: (request) => expect(request.body.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringContaining("make them shorter") }),
      },
      { identity: "lead", text: "alice: notes written." },
      // The answer to the user's own message goes to "user", not to the Lead: the Lead hears only that she is idle again.
      {
        identity: "lead",
        text: "noted",
        check: (request) => expect(JSON.parse(String(request.body.messages.at(-1)!.content))).toMatchObject({ agent_event: { from: "alice", kind: "idle" }, content: "alice is idle" }),
      },
    ]);
    await s.until("err", "with the Lead in");
    s.type("have alice write notes");
    await s.until("out", "alice is on it.\n");
    await s.until("err", "[alice] running (writer)");
    s.type("/team");
    await s.until("err", "alice (writer)  running  thinking");
    expect(s.text.err).toMatch(/lead {2}idle {2}\d+s {2}\d+ tokens\nalice/);
    release();
    await s.until("out", "alice: notes written.\n");
    s.type("@alice make them shorter");
    await s.until("err", "sent to alice (");
    // Her answer comes to the user, who sees it in the session.
    await s.until("out", "alice: shorter notes\n");
    await s.until("out", "noted\n");
    s.type("@nobody hello");
    await s.until("err", "agent: could not send to nobody:");
    s.type("exit");
    await s.done;
    s.server.assertDone();
  });
});

describe("sessions from inside a session", () => {
  test("/sessions marks this one; /new starts another on the same input, with its own history", async () => {
    const s = session([
      { identity: "lead", text: "first answer." },
      {
        identity: "lead",
        text: "fresh answer.",
        // The new session's Lead has no memory of the first one.
        check: (request) => expect(request.body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["second request"]),
      },
    ]);
    await s.until("err", `session ${s.sessionId}`);
    s.type("first request");
    await s.until("out", "first answer.\n");
    s.type("/sessions");
    await s.until("err", `* ${s.sessionId}`);
    s.type("/new");
    const fresh = await (async () => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const ids = [...s.text.err.matchAll(/session (\S+) with the Lead/g)].map((match) => match[1]);
        if (ids.length === 2) return ids[1] as string;
        if (Date.now() > deadline) throw new Error(`no second session line: ${s.text.err}`);
        await Bun.sleep(10);
      }
    })();
    expect(fresh).not.toBe(s.sessionId);
    s.type("second request");
    await s.until("out", "fresh answer.\n");
    s.type("/sessions");
    await s.until("err", `* ${fresh}`);
    expect(s.text.err).toContain(`  ${s.sessionId}`);
    s.type("/exit");
    await s.done;
    s.server.assertDone();
  });
});

test("/compact summarises the Lead's older history now", async () => {
  const s = session([
    { identity: "lead", text: "one." },
    { identity: "lead", text: "two." },
    {
      identity: "lead",
      text: "We talked about one and two.",
      check: (request) => expect(request.body.tools ?? []).toEqual([]),
    },
    {
      identity: "lead",
      text: "three.",
      check: (request) => expect(String(request.body.messages[1]?.content)).toContain("We talked about one and two."),
    },
  ]);
  await s.until("err", `session ${s.sessionId}`);
  s.type("first");
  await s.until("out", "one.\n");
  s.type("second");
  await s.until("out", "two.\n");
  s.type("/compact");
  await s.until("err", "compacted: ");
  expect(s.text.err).toMatch(/compacted: [1-9]\d* message\(s\) summarised\n/);
  s.type("third");
  await s.until("out", "three.\n");
  s.type("/exit");
  await s.done;
  s.server.assertDone();
});

test("/changes lists what the Lead wrote; /rewind 2 puts the file back as before its second turn and tells the Lead", async () => {
  const write = (content: string): ScriptedReply => ({ identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "plan.md", content } }] });
  const s = session([
    write("# plan v1\n"),
    { identity: "lead", text: "wrote v1." },
    { identity: "lead", toolCalls: [{ name: "read_file", arguments: { path: "plan.md" } }] },
    write("# plan v2\n"),
    { identity: "lead", text: "wrote v2." },
    {
      identity: "lead",
      text: "noted.",
      check: (request) => expect(JSON.stringify(request.body.messages)).toContain("[agent rewind] The user put the workspace's files back as they were before turn 2: restored plan.md (10 bytes)"),
    },
  ]);
  await s.until("err", `session ${s.sessionId}`);
  s.type("write the plan");
  await s.until("out", "wrote v1.\n");
  s.type("revise it");
  await s.until("out", "wrote v2.\n");
  s.type("/changes");
  await s.until("err", "lead #2");
  expect(s.text.err).toMatch(/\n1 +\S+ +lead +lead #1 +write_file +plan\.md +created \(10 B\)\n2 +\S+ +lead +lead #2 +write_file +plan\.md +10 B -> 10 B\n/);
  s.type("/rewind 2");
  await s.until("err", "rewound to before turn 2");
  expect(readFileSync(join(s.workspace, "plan.md"), "utf8")).toBe("# plan v1\n");
  s.type("what changed?");
  await s.until("out", "noted.\n");
  s.type("/exit");
  await s.done;
  s.server.assertDone();
});
