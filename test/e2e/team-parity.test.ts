import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { hook } from "./hook-fixture.ts";
import { lastToolResult, parseResult, runSetup, scriptedServers } from "./run-fixture.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";

// Claude Code's agent-team features on the compiled binary (docs/team.md): the
// task tools for every teammate (config team.taskTools "all"), a team hook's
// `continue: false` stopping a teammate, and a Lead that only coordinates
// (--lead-mode delegate, config lead.mode).

const start = scriptedServers();
const RUN = ["--permission-mode", "bypassPermissions", "--trust-project", "--output", "json"];
const spawnAlice = (prompt: string) => ({ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt } });
const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);
// The Lead's event turns, however their events are batched.
const leadNotes = { respond: () => ({ text: "noted" }) };

function config(workspace: string, value: Record<string, unknown>): void {
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify(value));
}

describe("team.taskTools", () => {
  test('"all": a teammate that does not claim by itself creates, lists, claims and completes tasks', async () => {
    const { run, workspace } = runSetup();
    config(workspace, { team: { taskTools: "all" } });
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice("Plan the docs work and do it.")] },
        { identity: "lead", text: "alice plans it" },
        {
          identity: "alice",
          toolCalls: [{ name: "create_task", arguments: { subject: "write the docs" } }],
          check: (request) => expect(toolNames(request)).toEqual(expect.arrayContaining(["create_task", "get_task", "list_tasks", "claim_task", "complete_task"])),
        },
        { identity: "alice", toolCalls: [{ name: "claim_task", arguments: { id: "t1" } }], check: (request) => expect(lastToolResult(request)).toContain("created t1") },
        { identity: "alice", toolCalls: [{ name: "complete_task", arguments: { id: "t1" } }], check: (request) => expect(lastToolResult(request)).toContain("claimed t1") },
        { identity: "alice", toolCalls: [{ name: "list_tasks", arguments: {} }], check: (request) => expect(lastToolResult(request)).toContain("completed t1") },
        { identity: "alice", text: "docs written", check: (request) => expect(lastToolResult(request)).toMatch(/t1 .*completed.*alice|t1 .*alice.*completed/s) },
      ],
      leadNotes,
    );
    const result = await run(["Get the docs written.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
  }, 90_000);

  test("by default a teammate that does not claim by itself has no task tools", async () => {
    const { run } = runSetup();
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice("Do it.")] },
        { identity: "lead", text: "started" },
        { identity: "alice", text: "done", check: (request) => expect(toolNames(request).filter((name) => name.endsWith("_task"))).toEqual([]) },
      ],
      leadNotes,
    );
    const result = await run(["Do it with a helper.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
  }, 90_000);
});

describe('a team hook answering "continue": false', () => {
  test("from TeammateIdle: the teammate shuts down and the Lead is told why", async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TeammateIdle", "stop.sh", `#!/bin/sh\necho '{"continue": false, "stopReason": "the budget for helpers is spent"}'\n`);
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice("Count the tables.")] },
        { identity: "lead", text: "alice counts" },
        { identity: "alice", text: "3 tables" },
      ],
      leadNotes,
    );
    const result = await run(["Count the tables with a helper.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(parseResult(result.stdout).teammates).toEqual([{ name: "alice", role: "helper", state: "shutdown" }]);
    const last = server.requests.filter((r) => r.identity === "lead").at(-1)!;
    expect(eventsIn(last)).toEqual([
      { from: "alice", kind: "result", content: "3 tables" },
      { from: "alice", kind: "message", content: 'alice was shut down by its TeammateIdle hook ("continue": false): the budget for helpers is spent' },
    ]);
    // Her turn ran once: no idle period, no turn after the stop.
    expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(1);
  }, 90_000);

  test("from TaskCompleted: the teammate that completed the task shuts down after its turn", async () => {
    const { run, workspace } = runSetup();
    config(workspace, { team: { taskTools: "all" } });
    hook(workspace, "TaskCompleted", "stop.sh", `#!/bin/sh\necho '{"continue": false, "stopReason": "one task per helper"}'\n`);
    const server = start(
      [
        { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "count the tables" } }] },
        { identity: "lead", toolCalls: [spawnAlice("Claim t1 and do it.")] },
        { identity: "lead", text: "alice is on t1" },
        { identity: "alice", toolCalls: [{ name: "claim_task", arguments: { id: "t1" } }] },
        { identity: "alice", toolCalls: [{ name: "complete_task", arguments: { id: "t1" } }] },
        { identity: "alice", text: "3 tables", check: (request) => expect(lastToolResult(request)).toContain("completed t1") },
      ],
      leadNotes,
    );
    const result = await run(["Count the tables with a helper.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(parseResult(result.stdout).teammates).toEqual([{ name: "alice", role: "helper", state: "shutdown" }]);
    const last = server.requests.filter((r) => r.identity === "lead").at(-1)!;
    expect(eventsIn(last).filter((event) => event.kind === "message")).toEqual([
      { from: "alice", kind: "message", content: 'alice was shut down by its TaskCompleted hook ("continue": false): one task per helper' },
    ]);
  }, 90_000);
});

describe("delegate mode", () => {
  const COORDINATION = ["claim_task", "complete_task", "create_task", "get_task", "list_tasks", "read_attachment", "request_shutdown", "review_plan", "send_message", "spawn_teammate"];

  test.each([
    { how: "--lead-mode delegate", args: ["--lead-mode", "delegate"], config: undefined },
    { how: "config lead.mode", args: [], config: { lead: { mode: "delegate" } } },
  ])("$how: the Lead is offered only the coordination tools; a teammate still edits files", async ({ args, config: value }) => {
    const { run, workspace } = runSetup();
    if (value) config(workspace, value);
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice("Write notes.txt saying hello.")], check: (request) => expect(toolNames(request).sort()).toEqual(COORDINATION) },
        { identity: "lead", text: "alice writes it" },
        { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "hello\n" } }] },
        { identity: "alice", text: "notes.txt written" },
      ],
      leadNotes,
    );
    const result = await run(["Write notes.txt.", "--base-url", server.url, ...RUN, ...args]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    // Told so in its system prompt.
    expect(String(server.requests[0]!.body.messages[0]!.content)).toContain("You are in delegate mode");
    expect(await Bun.file(join(workspace, "notes.txt")).text()).toBe("hello\n");
  }, 90_000);

  test("agent drain keeps a session's --lead-mode delegate: the drained Lead still only coordinates", async () => {
    const { run, drain } = teamSetup();
    const server = start(
      [
        { identity: "lead", toolCalls: [spawnAlice("Count the tables.")] },
        // Slow: alice reports during the user turn, and the run (--no-wait) leaves it to drain.
        { identity: "lead", text: "alice counts", delayMs: 1_500 },
        { identity: "alice", text: "3 tables" },
      ],
      leadNotes,
    );
    const result = await run(["Count the tables.", "--no-wait", "--base-url", server.url, ...RUN, "--lead-mode", "delegate"]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    const before = server.requests.length;
    const drained = await drain(["--base-url", server.url, "--output", "json"]);
    expect({ code: drained.code }).toEqual({ code: 0 });
    expect(drained.stderr).toContain("Lead: --lead-mode delegate");
    const eventTurn = server.requests.slice(before).filter((r) => r.identity === "lead");
    expect(eventTurn.length).toBeGreaterThan(0);
    for (const request of eventTurn) expect(toolNames(request).sort()).toEqual(COORDINATION);
    server.assertDone();
  }, 90_000);

  test("an unknown --lead-mode is refused with the choices", async () => {
    const { run } = runSetup();
    const result = await run(["hi", "--lead-mode", "solo", "--base-url", "http://127.0.0.1:9/v1", ...RUN]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("solo");
    expect(result.stderr).toContain("delegate");
  }, 30_000);
});
