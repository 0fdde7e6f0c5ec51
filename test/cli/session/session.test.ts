import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { interactiveSession } from "../../../src/cli/session/command.ts";
import { loadSettings } from "../../../src/config/load.ts";
import { ANSWER_KEYS } from "../../../src/permissions/tty-asker.ts";
import { type ScriptedReply, ScriptedModelServer } from "../../support/model-server.ts";
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
  const stateDir = join(root, "state");
  const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
  const text = { out: "", err: "" };
  stdout.on("data", (chunk) => (text.out += chunk));
  stderr.on("data", (chunk) => (text.err += chunk));
  const done = interactiveSession({ workspace, stateDir, settings, warnings: [], waitLock: false, sandbox: unsandboxed }, { stdin, stdout, stderr, terminal: false, verbose: false });
  /** Waits until `pattern` is in the output so far: the next line must not be typed ahead of it. */
  const until = async (stream: "out" | "err", pattern: string) => {
    const deadline = Date.now() + 10_000;
    while (!text[stream].includes(pattern)) {
      if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(pattern)} in std${stream}: ${JSON.stringify(text[stream])}`);
      await Bun.sleep(10);
    }
  };
  const type = (line: string) => stdin.write(`${line}\n`);
  return { server, workspace, stateDir, text, done, until, type, stdin };
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
          const [answer, envelope] = request.body.messages.slice(-2) as { role: string; content: string }[];
          expect(answer).toMatchObject({ role: "assistant", content: "second done." });
          expect(JSON.parse(envelope!.content)).toMatchObject({ agent_event: { from: "alice", kind: "result" }, content: "notes written" });
        },
      },
    ]);
    await s.until("err", "a session with the Lead");
    s.type("have alice write notes");
    await s.until("out", "alice is on it.\n");
    s.type("second request");
    await s.until("out", "alice finished: notes written.\n");
    s.type("exit");
    await s.done;
    expect(s.text.out).toBe("alice is on it.\nsecond done.\nalice finished: notes written.\n");
    expect(s.text.err).toContain("[lead] event turn: result from alice\n");
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
      "agent: session ended: alice still working (stopped now; the task stays in the mailbox); run `agent drain` to continue\n",
    );
  });
});
