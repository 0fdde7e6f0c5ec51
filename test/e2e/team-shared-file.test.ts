import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { parseResult, runSetup } from "./run-fixture.ts";
import { TeamList, eventsIn } from "./team-fixture.ts";

// Two teammates in one workspace edit the same file (docs/files.md#versions):
// alice and bob both read notes.txt; alice writes it; bob's write, over the
// content he read, is refused naming alice and showing her lines; bob reads it
// again and writes his merge. Nothing of alice's is lost. Once with the
// teammates in the Lead's process (files store), once with each in its own
// `agent worker` on PostgreSQL, where the versions and the journal are rows.

const servers: ScriptedModelServer[] = [];
const children: Subprocess<"ignore", "pipe", "pipe">[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const server of servers.splice(0)) await server.close();
});
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});
beforeAll(() => {
  ensureBinary();
}, 120_000);

function start(args: string[]) {
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  return child;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const lastTool = (request: RecordedRequest) => String(request.body.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");
const read = { name: "read_file", arguments: { path: "notes.txt" } };
const write = (content: string) => ({ name: "write_file", arguments: { path: "notes.txt", content } });
const ORIGINAL = "# notes\nfirst line\n";
const ALICE = "# notes\nfirst line\nalice: the schema has 2 tables\n";
const MERGED = `${ALICE}bob: the README is fine\n`;

function script(refusals: string[]): { replies: ScriptedReply[]; respond: (request: RecordedRequest) => { text: string } } {
  const bobRead = deferred();
  const aliceWrote = deferred();
  const replies: ScriptedReply[] = [
    {
      identity: "lead",
      toolCalls: [
        { name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "add the table count to notes.txt" } },
        { name: "spawn_teammate", arguments: { name: "bob", role: "helper", prompt: "add the README check to notes.txt" } },
      ],
    },
    { identity: "lead", text: "alice and bob are on it." },
    { identity: "alice", toolCalls: [read] },
    // alice writes only once bob has read the same content.
    { identity: "alice", toolCalls: [write(ALICE)], gate: bobRead.promise },
    { identity: "alice", text: "alice done", check: (request) => (expect(lastTool(request)).toContain("overwrote notes.txt"), aliceWrote.resolve()) },
    { identity: "bob", toolCalls: [read] },
    // bob writes over what he read, after alice changed it: refused.
    { identity: "bob", toolCalls: [write(`${ORIGINAL}bob: the README is fine\n`)], gate: aliceWrote.promise, check: () => bobRead.resolve() },
    { identity: "bob", toolCalls: [read], check: (request) => refusals.push(lastTool(request)) },
    { identity: "bob", toolCalls: [write(MERGED)], check: (request) => expect(lastTool(request)).toBe(ALICE) },
    { identity: "bob", text: "bob done", check: (request) => expect(lastTool(request)).toContain("overwrote notes.txt") },
  ];
  const respond = (request: RecordedRequest) => {
    if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
    return { text: eventsIn(request).filter((event) => event.kind === "result").length === 2 ? "both done." : "Noted." };
  };
  return { replies, respond };
}

function expectRefusal(refusals: string[]): void {
  expect(refusals).toHaveLength(1);
  const [first, ...diff] = refusals[0]!.split("\n");
  expect(first).toBe(
    "write_file refused: notes.txt changed after you read it: alice changed line 3; read_file it again and redo your change on the current content",
  );
  expect(diff).toEqual(["@@ -3,0 +3,1 @@", "+alice: the schema has 2 tables"]);
}

describe("two teammates write one file in a shared workspace", () => {
  test("files store: the later write is refused naming alice, then succeeds after a re-read; no update lost", async () => {
    const { workspace, stateDir } = runSetup();
    writeFileSync(join(workspace, "notes.txt"), ORIGINAL);
    const refusals: string[] = [];
    const { replies, respond } = script(refusals);
    const server = ScriptedModelServer.start(replies, { respond });
    servers.push(server);
    const child = start(["run", "--permission-mode", "acceptEdits", "--output", "json", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "Have alice and bob add to notes.txt."]);
    const code = await child.exited;
    const stderr = await new Response(child.stderr).text();
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(await new Response(child.stdout).text())).toMatchObject({ subtype: "success" });
    server.assertDone();
    expectRefusal(refusals);
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe(MERGED);
    // Who changed what in its last turn, from the journal.
    const listed = await runAgent(["team", "list", "--workspace", workspace, "--state-dir", stateDir]);
    expect(listed.stdout).toMatch(/\nalice .* changed in its last turn: notes\.txt\n/);
    expect(listed.stdout).toMatch(/\nbob .* changed in its last turn: notes\.txt\n/);
    const json = TeamList.parse(JSON.parse((await runAgent(["team", "list", "--json", "--workspace", workspace, "--state-dir", stateDir])).stdout));
    expect(json.teammates.map((t) => [t.name, t.files_changed])).toEqual([["alice", ["notes.txt"]], ["bob", ["notes.txt"]]]);
  }, 90_000);

  test("PostgreSQL, alice and bob each in their own agent worker: the same, the versions and journal shared as rows", async () => {
    const { workspace, stateDir } = runSetup();
    writeFileSync(join(workspace, "notes.txt"), ORIGINAL);
    cluster ??= startPostgres();
    const url = await (await cluster).database();
    const refusals: string[] = [];
    const { replies, respond } = script(refusals);
    const workersUp = deferred();
    replies[0] = { ...replies[0]!, gate: workersUp.promise };
    const server = ScriptedModelServer.start(replies, { respond });
    servers.push(server);
    const common = ["--session", "shared-file", "--permission-mode", "acceptEdits", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--store", url];
    const lead = start(["run", "--remote-teammates", "--output", "json", ...common, "Have alice and bob add to notes.txt."]);
    while (server.requests.length === 0) await Bun.sleep(20);
    const workers = [start(["worker", "--max-teammates", "1", ...common]), start(["worker", "--max-teammates", "1", ...common])];
    workersUp.resolve();
    const code = await lead.exited;
    const stderr = await new Response(lead.stderr).text();
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(parseResult(await new Response(lead.stdout).text())).toMatchObject({ subtype: "success" });
    for (const worker of workers) worker.kill("SIGTERM");
    const workerErrors = await Promise.all(workers.map((worker) => new Response(worker.stderr).text()));
    // Each worker ran one of them: the refusal crossed processes.
    expect(workerErrors.filter((text) => text.includes("[alice] running")).length).toBe(1);
    expect(workerErrors.filter((text) => text.includes("[bob] running")).length).toBe(1);
    expect(workerErrors.findIndex((text) => text.includes("[alice] running"))).not.toBe(workerErrors.findIndex((text) => text.includes("[bob] running")));
    server.assertDone();
    expectRefusal(refusals);
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe(MERGED);
  }, 120_000);
});

describe("owns: paths a teammate owns", () => {
  test("bob's write to a path alice owns asks the Lead's side, which headless denies naming alice; his other write and alice's own go through", async () => {
    const { workspace, stateDir } = runSetup();
    const refusals: string[] = [];
    const aliceWrote = deferred();
    const server = ScriptedModelServer.start(
      [
        {
          identity: "lead",
          toolCalls: [
            { name: "spawn_teammate", arguments: { name: "alice", role: "api", prompt: "write the API", owns: ["src/api/**"] } },
            { name: "spawn_teammate", arguments: { name: "bob", role: "docs", prompt: "document the API" } },
          ],
        },
        { identity: "lead", text: "on it." },
        { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "src/api/routes.ts", content: "export const routes = [];\n" } }] },
        { identity: "alice", text: "api written", check: (request) => (expect(lastTool(request)).toContain("created src/api/routes.ts"), aliceWrote.resolve()) },
        { identity: "bob", toolCalls: [{ name: "write_file", arguments: { path: "src/api/extra.ts", content: "// bob was here\n" } }], gate: aliceWrote.promise },
        { identity: "bob", toolCalls: [{ name: "write_file", arguments: { path: "docs/api.md", content: "# API\n" } }], check: (request) => refusals.push(lastTool(request)) },
        { identity: "bob", text: "docs written", check: (request) => expect(lastTool(request)).toContain("created docs/api.md") },
      ],
      {
        respond: (request) => {
          if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
          return { text: "noted." };
        },
      },
    );
    servers.push(server);
    const child = start(["run", "--permission-mode", "acceptEdits", "--output", "json", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "Split the API work."]);
    const code = await child.exited;
    const stderr = await new Response(child.stderr).text();
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toStartWith("write_file refused: src/api/extra.ts is owned by alice (owns src/api/**) and the Lead's side did not allow this write (");
    expect(existsSync(join(workspace, "src/api/extra.ts"))).toBe(false);
    expect(readFileSync(join(workspace, "docs/api.md"), "utf8")).toBe("# API\n");
  }, 90_000);
});
