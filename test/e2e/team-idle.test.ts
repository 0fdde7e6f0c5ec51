import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { clusterForFile } from "../support/postgres.ts";
import { hook } from "./hook-fixture.ts";
import { lastToolResult, runSetup, scriptedServers } from "./run-fixture.ts";

// Idle notices and the team's hooks on the compiled binary (docs/team.md#idle-notices,
// docs/hooks.md): a teammate that has nothing left tells the Lead once, in the
// envelope every message uses, batched with the other events of a Lead turn; a
// TeammateIdle hook exiting 2 keeps it working; TaskCreated and TaskCompleted
// hooks exiting 2 refuse what was asked. On each store.

const start = scriptedServers();
const pg = clusterForFile();
const stores = [
  { name: "files", args: async () => [] as string[] },
  { name: "PostgreSQL", args: async () => ["--store", await pg().database()] },
];

interface Envelope {
  agent_event: { id: string; from: string; kind: string; in_reply_to?: string };
  content: string;
}

/** The Lead-side envelopes a request carries. */
function envelopesIn(request: RecordedRequest): Envelope[] {
  return request.body.messages.flatMap((message) => {
    if (message.role !== "user" || typeof message.content !== "string" || !message.content.startsWith('{"agent_event"')) return [];
    return [JSON.parse(message.content) as Envelope];
  });
}

/** The envelopes a Lead request added since the one before: what its event turn answers. */
function newEnvelopes(requests: RecordedRequest[], index: number): Envelope[] {
  const before = index === 0 ? 0 : envelopesIn(requests[index - 1]!).length;
  return envelopesIn(requests[index]!).slice(before);
}

/** A hook that refuses once, with `reason` on stderr, logging its stdin; later calls let it through. */
const refuseOnce = (marker: string, reason: string) => `#!/bin/sh
cat >> ${marker}.stdin; echo >> ${marker}.stdin
if [ -e ${marker} ]; then exit 0; fi
touch ${marker}
echo "${reason}" >&2
exit 2
`;

const RUN = ["--permission-mode", "bypassPermissions", "--trust-project", "--output", "json"];
const spawnCall = (name: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt } });

describe.each(stores)("idle notices and team hooks, store: $name", (store) => {
  test("a Lead waiting on three teammates gets their three idle notices in one event turn, each once", async () => {
    const names = ["ann", "ben", "cat"];
    // A barrier, not a clock: no teammate is answered before all three asked.
    const asked = names.map(() => Promise.withResolvers<void>());
    const all = Promise.all(asked.map((a) => a.promise));
    const server = start([
      { identity: "lead", toolCalls: names.map((name) => spawnCall(name, `part ${name}`)) },
      { identity: "lead", text: "three helpers started" },
      ...names.map((name, i) => ({ identity: name, check: () => asked[i]!.resolve(), gate: all, text: `${name} finished` })),
      { identity: "lead", text: "all three are done" },
    ]);
    const { run } = runSetup();
    const result = await run(["Split the job in three.", "--base-url", server.url, ...RUN, ...(await store.args())]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    const lead = server.requests.filter((r) => r.identity === "lead");
    // Two requests in the user turn, ONE event turn for three results and three idle notices.
    expect(lead).toHaveLength(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ result: "all three are done", events: 6, event_turns: 1 });
    const events = newEnvelopes(lead, 2);
    const idle = events.filter((e) => e.agent_event.kind === "idle");
    expect(idle.map((e) => e.content).sort()).toEqual(["ann is idle", "ben is idle", "cat is idle"]);
    expect(idle.map((e) => e.agent_event.from).sort()).toEqual(names);
    // Each notice names the task its teammate last worked, as its result does.
    for (const notice of idle) {
      const resultOf = events.find((e) => e.agent_event.kind === "result" && e.agent_event.from === notice.agent_event.from);
      expect(notice.agent_event.in_reply_to).toBe(resultOf!.agent_event.in_reply_to!);
    }
  }, 90_000);

  test("a TeammateIdle hook exiting 2 keeps the teammate working with the hook's message; it is idle once it lets it go", async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TeammateIdle", "idle.sh", refuseOnce("idle-refused", "Run the tests before you stop."));
    const firstEventTurn = Promise.withResolvers<void>();
    const server = start([
      { identity: "lead", toolCalls: [spawnCall("alice", "Write the parser.")] },
      { identity: "lead", text: "alice is on it" },
      { identity: "alice", text: "parser written" },
      {
        identity: "alice",
        // Answered once the Lead took her first result alone: her second comes with her idle notice.
        gate: firstEventTurn.promise,
        text: "tests pass",
        check: (request) => {
          const last = request.body.messages.at(-1);
          expect(last).toEqual({ role: "user", content: "TeammateIdle hook feedback:\nRun the tests before you stop." });
        },
      },
      { identity: "lead", text: "noted the parser", check: () => firstEventTurn.resolve() },
      { identity: "lead", text: "alice is done" },
    ]);
    const result = await run(["Have alice write the parser.", "--base-url", server.url, ...RUN, ...(await store.args())]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    const lead = server.requests.filter((r) => r.identity === "lead");
    // No idle notice while the hook kept her working: her first result came alone.
    expect(newEnvelopes(lead, 2).map((e) => `${e.agent_event.kind}: ${e.content}`)).toEqual(["result: parser written"]);
    expect(newEnvelopes(lead, 3).map((e) => `${e.agent_event.kind}: ${e.content}`)).toEqual(["result: tests pass", "idle: alice is idle"]);
    // Claude Code's keys on the hook's stdin, twice: refused, then let through.
    const stdin = readFileSync(join(workspace, "idle-refused.stdin"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(stdin).toHaveLength(2);
    expect(stdin[0]).toMatchObject({ hook_event_name: "TeammateIdle", teammate_name: "alice", team_name: expect.any(String), teammate: "alice", role: "helper" });
  }, 90_000);
});

describe("task hooks", () => {
  test("a TaskCreated hook exiting 2 refuses the task: the tool result gives its reason and no task exists", async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TaskCreated", "created.sh", refuseOnce("create-refused", "Tasks need a ticket number."));
    const server = start([
      { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "ship it", description: "all of it" } }] },
      {
        identity: "lead",
        toolCalls: [{ name: "list_tasks", arguments: {} }],
        check: (request) => expect(lastToolResult(request)).toContain('the TaskCreated hook refused the task "ship it", it was not created: Tasks need a ticket number.'),
      },
      { identity: "lead", text: "no task", check: (request) => expect(lastToolResult(request)).not.toContain("ship it") },
    ]);
    const result = await run(["Plan it.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    const stdin = JSON.parse(readFileSync(join(workspace, "create-refused.stdin"), "utf8")) as Record<string, unknown>;
    expect(stdin).toMatchObject({ hook_event_name: "TaskCreated", task_subject: "ship it", task_description: "all of it", identity: "lead" });
    expect(stdin.task_id).toBeUndefined();
  }, 60_000);

  test('a TaskCreated hook answering JSON {"decision":"block","reason":…} refuses it as exit 2 does', async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TaskCreated", "created.sh", `#!/bin/sh\necho '{"decision":"block","reason":"One task at a time."}'\n`);
    const server = start([
      { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "ship it" } }] },
      {
        identity: "lead",
        text: "no task",
        check: (request) => expect(lastToolResult(request)).toContain('the TaskCreated hook refused the task "ship it", it was not created: One task at a time.'),
      },
    ]);
    const result = await run(["Plan it.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
  }, 60_000);

  test("a TaskCompleted hook exiting 2 refuses the completion: the task stays in progress and the agent gets the reason", async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TaskCompleted", "completed.sh", refuseOnce("complete-refused", "The tests are red."));
    const server = start([
      { identity: "lead", toolCalls: [{ name: "create_task", arguments: { subject: "ship it" } }] },
      { identity: "lead", toolCalls: [{ name: "claim_task", arguments: { id: "t1" } }] },
      { identity: "lead", toolCalls: [{ name: "complete_task", arguments: { id: "t1" } }] },
      {
        identity: "lead",
        toolCalls: [{ name: "get_task", arguments: { id: "t1" } }],
        check: (request) => expect(lastToolResult(request)).toContain("the TaskCompleted hook refused completing t1, it stays in progress: The tests are red."),
      },
      {
        identity: "lead",
        toolCalls: [{ name: "complete_task", arguments: { id: "t1" } }],
        check: (request) => expect(lastToolResult(request)).toContain("in_progress"),
      },
      { identity: "lead", text: "shipped", check: (request) => expect(lastToolResult(request)).toContain("completed t1 ship it") },
    ]);
    const result = await run(["Ship it.", "--base-url", server.url, ...RUN]);
    expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    const stdin = readFileSync(join(workspace, "complete-refused.stdin"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(stdin).toHaveLength(2);
    expect(stdin[0]).toMatchObject({ hook_event_name: "TaskCompleted", task_id: "t1", task_subject: "ship it", identity: "lead" });
  }, 60_000);

  test("a self-claiming teammate whose completion the TaskCompleted hook refuses works on with the reason; the Lead hears the result once", async () => {
    const { run, workspace } = runSetup();
    hook(workspace, "TaskCompleted", "completed.sh", refuseOnce("complete-refused", "Add a test first."));
    const server = ScriptedModelServer.start(
      [
        {
          identity: "lead",
          toolCalls: [
            { name: "create_task", arguments: { subject: "fix the bug" } },
            { name: "spawn_teammate", arguments: { name: "alice", role: "fixer", prompt: "Take tasks from the graph.", auto_claim: true } },
          ],
        },
        { identity: "lead", text: "alice takes the tasks" },
        { identity: "alice", text: "standing by" },
        { identity: "alice", text: "bug fixed", check: (request) => expect(String(request.body.messages.at(-1)!.content)).toStartWith("You claimed task t1") },
        {
          identity: "alice",
          text: "bug fixed, with a test",
          check: (request) => expect(String(request.body.messages.at(-1)!.content)).toStartWith("the TaskCompleted hook refused completing t1, it stays in progress: Add a test first."),
        },
      ],
      // The Lead's event turns: how many depends on how its events batch.
      { respond: () => ({ text: "noted" }) },
    );
    try {
      const result = await run(["Fix it.", "--base-url", server.url, ...RUN]);
      expect({ code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(server.problems).toEqual([]);
      expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(3);
      const heard = envelopesIn(server.requests.findLast((r) => r.identity === "lead")!);
      const results = heard.filter((e) => e.agent_event.kind === "result").map((e) => e.content);
      expect(results).toEqual(["standing by", "bug fixed, with a test"]);
      expect(heard.filter((e) => e.agent_event.kind === "idle").map((e) => e.content)).toEqual(["alice is idle"]);
      const stdin = readFileSync(join(workspace, "complete-refused.stdin"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(stdin.map((keys) => [keys.task_id, keys.teammate_name])).toEqual([
        ["t1", "alice"],
        ["t1", "alice"],
      ]);
    } finally {
      await server.close();
    }
  }, 60_000);
});
