import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Task } from "../../src/tasks/task.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { readTeamFiles } from "../fixtures/team-files.ts";
import { ensureBinary } from "./agent-binary.ts";
import { parseStream } from "./run-fixture.ts";
import { TeamList, eventsIn, teamSetup } from "./team-fixture.ts";

// Self-claiming teammates on the compiled binary: the Lead makes a task graph of
// five tasks (t4 waits for t2 and t3, which wait for t1; t5 is free) and spawns
// two teammates with auto_claim; they take the unblocked tasks as they become
// free, one winner each, and the Lead hears of every claim and every result.

let server: ScriptedModelServer | undefined;
beforeAll(() => ensureBinary(), 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const TASKS = [
  { subject: "write the schema" },
  { subject: "write the API", blockedBy: ["t1"] },
  { subject: "document the schema", blockedBy: ["t1"] },
  { subject: "test the API against the docs", blockedBy: ["t2", "t3"] },
  { subject: "update the changelog" },
];
const PROMPT = "Plan the users feature as tasks and let two teammates take them.";

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);
const lastUser = (request: RecordedRequest) => String(request.body.messages.findLast((m) => m.role === "user")?.content ?? "");

/**
 * The Lead: creates the tasks, spawns the two, then notes whatever events come.
 * A teammate: says it is ready for its first prompt; for a claimed task, writes
 * `<task>.txt`, then answers; replies follow from the request, so the run's
 * order of claims does not matter.
 */
function respond(request: RecordedRequest): ScriptedReply {
  const name = request.identity ?? "";
  if (name === "lead") return { text: "noted" };
  const last = request.body.messages.at(-1)!;
  const claimed = /^You claimed task (t\d+)/.exec(lastUser(request))?.[1];
  if (!claimed) return { text: `${name} is ready` };
  if (last.role === "user") {
    return { delayMs: 60, toolCalls: [{ name: "write_file", arguments: { path: `${claimed}.txt`, content: `${name}\n` } }] };
  }
  return { text: `${name} did ${claimed}` };
}

describe("self-claiming teammates", () => {
  test("two auto-claiming teammates and five tasks with dependencies: each completed once, blockers first; the Lead sees every claim and result", async () => {
    server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: TASKS.map((task) => ({ name: "create_task", arguments: task })) },
        {
          identity: "lead",
          toolCalls: ["alice", "bob"].map((name) => ({
            name: "spawn_teammate",
            arguments: { name, role: "developer", prompt: "You will take tasks from the task graph. Say you are ready.", auto_claim: true },
          })),
        },
        { identity: "lead", text: "alice and bob are taking the tasks." },
      ],
      { respond },
    );
    const { run, agent, workspace, sessionDir } = teamSetup();
    const result = await run([PROMPT, "--base-url", server.url, "--permission-mode", "acceptEdits", "--output", "stream-json", "--quiet"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    const stateDir = sessionDir();

    // Every task completed once, by one of the two, each after its blockers.
    const tasks = readdirSync(join(stateDir, "tasks"))
      .filter((file) => file.endsWith(".json"))
      .map((file) => Task.parse(JSON.parse(readFileSync(join(stateDir, "tasks", file), "utf8"))))
      .sort((a, b) => a.id.localeCompare(b.id));
    expect(tasks.map((t) => [t.id, t.status])).toEqual([1, 2, 3, 4, 5].map((n) => [`t${n}`, "completed"]));
    for (const task of tasks) {
      expect(["alice", "bob"]).toContain(task.owner!);
      expect(readFileSync(join(workspace, `${task.id}.txt`), "utf8")).toBe(`${task.owner}\n`);
      for (const blocker of task.blockedBy) {
        expect(tasks.find((t) => t.id === blocker)!.completedAtUtc! <= task.claimedAtUtc!).toBe(true);
      }
    }

    // Mailboxes and histories: each message done once and answered once; per task one claim notice and one result.
    const files = readTeamFiles(stateDir);
    expect(files.violations).toEqual([]);
    const toLead = files.messages.filter((m) => m.recipient === "lead");
    for (const kind of ["task_claimed", "result"]) {
      expect(toLead.filter((m) => m.kind === kind && m.taskId !== undefined).map((m) => m.taskId).sort()).toEqual(["t1", "t2", "t3", "t4", "t5"]);
    }
    for (const m of toLead.filter((m) => m.kind === "task_claimed")) expect(m.content).toBe(`${m.sender} claimed task ${m.taskId}: ${TASKS[Number(m.taskId!.slice(1)) - 1]!.subject}`);

    // The Lead's requests: the claims and results as events naming the task.
    const leadEvents = server.requests.filter((r) => r.identity === "lead").flatMap((r) => eventsIn(r));
    expect(new Set(leadEvents.filter((e) => e.kind === "task_claimed").map((e) => e.content)).size).toBe(5);
    const envelope = JSON.parse(String(server.requests.findLast((r) => r.identity === "lead")!.body.messages.findLast((m) => String(m.content).includes('"task_claimed"'))!.content));
    expect(envelope.agent_event).toMatchObject({ kind: "task_claimed", task_id: expect.stringMatching(/^t[1-5]$/) });

    // Only a self-claiming teammate has the task tools; the Lead gets auto_claim on spawn_teammate.
    for (const request of server.requests.filter((r) => r.identity !== "lead")) {
      expect(toolNames(request)).toEqual(["shell", "read_file", "write_file", "send_message", "respond_shutdown", "read_attachment", "list_tasks", "claim_task", "complete_task"]);
    }
    const spawnTool = server.requests[0]!.body.tools!.find((t) => t.function.name === "spawn_teammate")!;
    expect(JSON.stringify(spawnTool.function.parameters)).toContain("auto_claim");

    // stream-json shows the claims as they go to the Lead.
    const lines = parseStream(result.stdout);
    expect(lines.filter((l) => l.type === "mailbox" && l.op === "send" && l.kind === "task_claimed")).toHaveLength(5);

    // team.json keeps auto-claim, so `agent drain` restores them claiming.
    const list = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(list.teammates.map((t) => [t.name, t.autoClaim])).toEqual([
      ["alice", true],
      ["bob", true],
    ]);
    const table = (await agent("team", "list")).stdout.trimEnd().split("\n").slice(2);
    expect(table.map((line) => [line.split(/ +/)[0], line.includes("claims tasks when idle")])).toEqual([
      ["alice", true],
      ["bob", true],
    ]);
  }, 60_000);
});
