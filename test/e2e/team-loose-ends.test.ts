import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { basename } from "node:path";
import { SQL } from "bun";
import { PgTaskTable } from "../../src/postgres/task-table.ts";
import { FileTaskStore, TaskStore } from "../../src/tasks/task-store.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { parseResult } from "./run-fixture.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";

// The team's loose ends, on the compiled binary and both stores: what happens to
// a failed teammate's tasks, to messages queued behind a shutdown, and what
// `agent team list` says of a teammate no process runs.

const servers: ScriptedModelServer[] = [];
const pools: SQL[] = [];
let cluster: Promise<PostgresCluster> | undefined;
beforeAll(() => ensureBinary(), 120_000);
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const pool of pools.splice(0)) await pool.close().catch(() => {});
});
afterAll(async () => {
  await (await cluster)?.stop();
});

interface Backend {
  name: string;
  args(): Promise<string[]>;
  tasks(sessionDir: string): TaskStore;
}

const files: Backend = {
  name: "files",
  args: async () => [],
  tasks: (sessionDir) => new FileTaskStore({ stateDir: sessionDir }),
};

function postgres(): Backend {
  let url = "";
  return {
    name: "PostgreSQL",
    async args() {
      cluster ??= startPostgres();
      url = await (await cluster).database();
      return ["--store", url];
    },
    tasks(sessionDir) {
      const sql = new SQL(url, { max: 1 });
      pools.push(sql);
      return new TaskStore({ table: new PgTaskTable(sql, basename(sessionDir)) });
    },
  };
}

const results = (request: RecordedRequest) => eventsIn(request).filter((event) => event.kind === "result");

describe.each([files, postgres()])("store: $name", (backend: Backend) => {
  test("a teammate that fails holding a task: the task is pending again with a note, and the Lead is told", async () => {
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "write the schema" } }] },
        {
          identity: "lead",
          toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "developer", prompt: "Say you are ready.", auto_claim: true } }],
        },
        { identity: "lead", text: "alice is on it." },
        { identity: "alice", text: "alice is ready" },
        // Her turn on the task she claimed: not retried, so the turn fails, and alice with it.
        { identity: "alice", status: 400, body: { error: { message: "this request is malformed", type: "invalid_request_error" } } },
      ],
      { respond: () => ({ text: "noted" }) },
    );
    servers.push(server);
    const { run, sessionDir } = teamSetup();
    const result = await run(["Have alice write the schema.", "--base-url", server.url, "--output", "json", ...(await backend.args())]);
    expect(result.code).toBe(0);
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "success", teammates: [{ name: "alice", state: "failed" }] });
    server.assertDone();
    const told = server.requests.filter((request) => request.identity === "lead").flatMap((request) => results(request).map((event) => event.content));
    expect(told).toContainEqual(expect.stringMatching(/^teammate alice failed on message .*HTTP 400.*; its task t1 is pending again$/));

    const task = await backend.tasks(sessionDir()).get("t1");
    expect(task).toMatchObject({ status: "pending", subject: "write the schema" });
    expect(task.owner).toBeUndefined();
    expect(task.note).toMatch(/^back to pending: its owner alice failed \(.*malformed.*\)$/);
  }, 60_000);

  test("a message queued behind a shutdown the teammate approves is answered \"shut down\" to its sender, not left in ready/", async () => {
    const leadAsked = Promise.withResolvers<void>();
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write notes." } }] },
        {
          identity: "lead",
          toolCalls: [
            { name: "request_shutdown", arguments: { name: "alice", reason: "the notes are all we need" } },
            { name: "send_message", arguments: { to: "alice", content: "And then the changelog, please." } },
          ],
        },
        { identity: "lead", text: "alice will stop after the notes.", check: () => leadAsked.resolve() },
        // Busy on her task until both are queued behind it.
        { identity: "alice", text: "notes written", gate: leadAsked.promise },
        { identity: "alice", toolCalls: [{ name: "respond_shutdown", arguments: { approve: true, reason: "the notes are done" } }] },
        { identity: "alice", text: "stopping" },
      ],
      { respond: () => ({ text: "noted" }) },
    );
    servers.push(server);
    const { run, sessionDir, agent } = teamSetup();
    const store = await backend.args();
    const result = await run(["Have alice write notes.", "--base-url", server.url, "--output", "json", ...store]);
    expect(result.code).toBe(0);
    expect(parseResult(result.stdout)).toMatchObject({ subtype: "success", teammates: [{ name: "alice", state: "shutdown" }] });
    server.assertDone();
    const told = server.requests.filter((request) => request.identity === "lead").flatMap((request) => results(request).map((event) => event.content));
    expect(told).toContainEqual(expect.stringMatching(/^shut down: alice approved a shutdown request and stopped before reading the message .* from lead$/));
    // Nothing waits in her mailbox: the message was answered and acknowledged.
    const listed = await agent("mailbox", "list", "--session", basename(sessionDir()), "--json", ...store);
    expect(listed.code).toBe(0);
    const alice = (JSON.parse(listed.stdout) as { agents: { name: string; counts: Record<string, number> }[] }).agents.find((entry) => entry.name === "alice");
    expect(alice?.counts).toMatchObject({ ready: 0, processing: 0, done: 3 });
  }, 60_000);

  test("agent team list says `waiting for a worker` of a teammate with work that no live process runs (--remote-teammates, no worker)", async () => {
    const server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write notes." } }] },
      { identity: "lead", text: "alice is on it." },
    ]);
    servers.push(server);
    const { workspace, stateDir, agent } = teamSetup();
    const store = await backend.args();
    const lead = Bun.spawn(
      [AGENT_BINARY, "run", "--session", "remote", "--remote-teammates", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...store, "Have alice write notes."],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    try {
      // The Lead's user turn is over once both replies were taken: alice is spawned, and the run waits for her.
      while (server.remaining > 0) await Bun.sleep(20);
      let listed = "";
      for (let i = 0; i < 100 && !listed.includes("alice"); i += 1) {
        listed = (await agent("team", "list", "--session", "remote", ...store)).stdout;
        if (!listed.includes("alice")) await Bun.sleep(50);
      }
      const row = listed.split("\n").find((line) => line.startsWith("alice"));
      expect(row).toMatch(/^alice +writer +waiting for a worker .* 1 +0 +0 +0 +no live process runs it: start `agent worker --session [0-9a-f-]+`$/);
      const json = JSON.parse((await agent("team", "list", "--session", "remote", "--json", ...store)).stdout) as { teammates: { name: string; state: string; condition?: string }[] };
      expect(json.teammates).toMatchObject([{ name: "alice", state: "idle", condition: "waiting for a worker" }]);
    } finally {
      lead.kill("SIGTERM");
      await lead.exited;
    }
    // Once the Lead is gone, nothing is at work: alice is just idle with a message waiting for `agent drain`.
    const after = (await agent("team", "list", "--session", "remote", ...store)).stdout;
    expect(after.split("\n").find((line) => line.startsWith("alice"))).toMatch(/^alice +writer +idle /);
  }, 60_000);

  test("two results answered in one event turn print one `event turn` line on stderr, not one per result", async () => {
    const bothAsked = { alice: Promise.withResolvers<void>(), bob: Promise.withResolvers<void>() };
    const together = Promise.all([bothAsked.alice.promise, bothAsked.bob.promise]);
    const server = ScriptedModelServer.start(
      [
        {
          identity: "lead",
          toolCalls: [
            { name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write notes." } },
            { name: "spawn_teammate", arguments: { name: "bob", role: "tester", prompt: "Check notes." } },
          ],
        },
        { identity: "lead", text: "both are on it." },
        // Answered together: their results reach the Lead together, for one event turn.
        { identity: "alice", text: "notes written", check: () => bothAsked.alice.resolve(), gate: together },
        { identity: "bob", text: "notes checked", check: () => bothAsked.bob.resolve(), gate: together },
        { identity: "lead", text: "both done.", check: (request) => expect(results(request).map((event) => event.content).sort()).toEqual(["notes checked", "notes written"]) },
      ],
    );
    servers.push(server);
    const { run } = teamSetup();
    const result = await run(["Have alice write notes and bob check them.", "--base-url", server.url, ...(await backend.args())]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "both done.\n" });
    server.assertDone();
    expect(result.stderr.match(/^\[lead\] event turn: .*$/gm)).toEqual([expect.stringMatching(/^\[lead\] event turn: result from (alice|bob), result from (alice|bob); (alice|bob) and (alice|bob) are idle$/)]);
  }, 60_000);
});
