import { describe, expect, test } from "bun:test";
import { clusterForFile } from "../support/postgres.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { until } from "./hook-fixture.ts";
import { parseResult, scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";

// `agent team send NAME TEXT --wait` on the compiled binary (docs/commands.md#agent-team-send):
// with nobody running the teammate it runs the session's runtime for the message,
// as `agent drain` would, and prints the answer; with a live session it waits for
// that session, and says so on stderr after 2 s.

const start = scriptedServers();
const pg = clusterForFile();
// No flag a drain would not take again (a recorded widening is named on stderr, and not taken).
const RUN = ["--output", "json"];
const spawnAlice = { name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "Count the tables." } };
const leadNotes = { respond: () => ({ text: "noted" }) };
const userWord = (content: string) => (request: { body: { messages: Array<Record<string, unknown>> } }) =>
  expect(JSON.parse(String(request.body.messages.at(-1)?.content))).toMatchObject({ agent_event: { from: "user", kind: "message" }, content });

/** A child process of the binary whose stderr is read as it comes. */
function started(args: string[], env: Record<string, string>) {
  const child = Bun.spawn([AGENT_BINARY, ...args], { env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key", ...env }, stdout: "pipe", stderr: "pipe" });
  let stderr = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  const stdout = new Response(child.stdout).text();
  // Never left behind by a failed test.
  const deadline = setTimeout(() => child.kill("SIGKILL"), 90_000);
  const done = (async () => {
    const code = await child.exited;
    clearTimeout(deadline);
    await reading;
    return { code, stdout: await stdout, stderr };
  })();
  return { child, stderr: () => stderr, done };
}

describe("agent team send --wait", () => {
  test("after the run ended: runs the session's runtime for the message and prints alice's answer", async () => {
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice] },
        { identity: "lead", text: "alice counts" },
        { identity: "alice", text: "3 tables" },
      ],
      leadNotes,
    );
    const { run, workspace, stateDir } = teamSetup();
    const result = await run(["Count the tables with a helper.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    const { session_id } = parseResult(result.stdout);

    server.push({ identity: "alice", text: "all good: 3 tables", check: userWord("status?") });
    const send = started(["team", "send", "alice", "status?", "--wait", "--workspace", workspace, "--state-dir", stateDir], { OPENAI_BASE_URL: server.url });
    const sent = await send.done;
    expect({ code: sent.code, stdout: sent.stdout }).toEqual({ code: 0, stdout: "all good: 3 tables\n" });
    // Quiet but for the one line a wait over 2 s prints.
    for (const line of sent.stderr.split("\n").filter(Boolean)) {
      expect(line).toMatch(new RegExp(`^agent: waiting for alice's answer to message [0-9a-f-]+: no runtime runs alice, so this runs session ${session_id}'s runtime for it as \`agent drain\` would$`));
    }
    server.assertDone();
    // The runtime it ran stopped: the session has no pending work left.
    const list = started(["team", "list", "--json", "--workspace", workspace, "--state-dir", stateDir], {});
    expect(JSON.parse((await list.done).stdout).teammates).toMatchObject([{ name: "alice", state: "idle", mailbox: { ready: 0, processing: 0 } }]);
  }, 120_000);

  test("with a live session (PostgreSQL): waits for that session's runtime, which answers; says so on stderr after 2 s", async () => {
    const store = ["--store", await pg().database()];
    const leadHeld = Promise.withResolvers<void>();
    const aliceHeld = Promise.withResolvers<void>();
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice] },
        // The Lead's user turn stays open, so the session's runtime is live while the operator waits.
        { identity: "lead", text: "alice counts", gate: leadHeld.promise },
        { identity: "alice", text: "3 tables" },
        // Answered once the waiting command has said what it waits for.
        { identity: "alice", text: "all good: 3 tables", gate: aliceHeld.promise, check: userWord("status?") },
      ],
      leadNotes,
    );
    const { workspace, stateDir } = teamSetup();
    const run = started(["run", "Count the tables with a helper.", "--base-url", server.url, ...RUN, ...store, "--workspace", workspace, "--state-dir", stateDir], {});
    try {
      await until(() => server.requests.filter((r) => r.identity === "lead").length === 2 && server.requests.some((r) => r.identity === "alice"), "the Lead's held turn and alice's first");
      // A base URL nothing answers: should this command run a runtime of its own, its model calls fail.
      const send = started(["team", "send", "alice", "status?", "--wait", ...store, "--workspace", workspace, "--state-dir", stateDir], { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
      await until(() => send.stderr().includes("\n") || send.child.exitCode !== null, "the waiting line on stderr");
      expect(send.stderr()).toMatch(/^agent: waiting for alice's answer to message [0-9a-f-]+ from session [0-9a-f-]+'s live runtime, which runs alice\n$/);
      aliceHeld.resolve();
      const sent = await send.done;
      expect({ code: sent.code, stdout: sent.stdout }).toEqual({ code: 0, stdout: "all good: 3 tables\n" });
      // Answered while the Lead's turn was still held: by that session, not by a runtime of its own.
      expect(run.child.exitCode).toBeNull();
    } finally {
      aliceHeld.resolve();
      leadHeld.resolve();
    }
    const ran = await run.done;
    expect({ code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
  }, 120_000);

  test("with a live session that ends before the answer (files): waits for it, then runs the runtime for the message itself", async () => {
    const leadHeld = Promise.withResolvers<void>();
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice] },
        { identity: "lead", text: "alice counts", gate: leadHeld.promise },
        { identity: "alice", text: "3 tables" },
      ],
      leadNotes,
    );
    const { workspace, stateDir } = teamSetup();
    const run = started(["run", "Count the tables with a helper.", "--base-url", server.url, ...RUN, "--workspace", workspace, "--state-dir", stateDir], {});
    let sent: Awaited<ReturnType<typeof started>["done"]>;
    try {
      await until(() => server.requests.filter((r) => r.identity === "lead").length === 2 && server.requests.some((r) => r.identity === "alice"), "the Lead's held turn and alice's first");
      const send = started(["team", "send", "alice", "status?", "--wait", "--workspace", workspace, "--state-dir", stateDir], { OPENAI_BASE_URL: server.url });
      await until(() => send.stderr().includes("\n") || send.child.exitCode !== null, "the waiting line on stderr");
      expect(send.stderr()).toMatch(/^agent: waiting for alice's answer to message [0-9a-f-]+ from session [0-9a-f-]+'s live runtime, which runs alice\n$/);
      // Only now can alice answer: the run, with her message still waiting for her, ends first.
      server.push({ identity: "alice", text: "all good: 3 tables", check: userWord("status?") });
      leadHeld.resolve();
      const ran = await run.done;
      expect({ code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({ code: 0, stderr: "" });
      sent = await send.done;
    } finally {
      leadHeld.resolve();
    }
    expect({ code: sent.code, stdout: sent.stdout }).toEqual({ code: 0, stdout: "all good: 3 tables\n" });
    // One line said what it waited for, however long each wait took.
    expect(sent.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    server.assertDone();
  }, 120_000);
});
