// kill -9 of the runtime at two chosen points of the Lead's turns, then a drain:
// what the restart must do with what the dead process left in the Lead's history.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage, serializeMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { MailboxPaths } from "../../src/mailbox/paths.ts";
import { FileTaskStore } from "../../src/tasks/task-store.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { derivedId } from "../../src/team/teammate-runtime.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { idsIn, takeCensus } from "../fixtures/mailbox-worker.ts";
import { TeamChildren, teamDirs, until } from "../fixtures/team-children.ts";
import { readTeamFiles } from "../fixtures/team-files.ts";
import { type WireMessage, unansweredToolCalls } from "../fixtures/team-model.ts";

const children = new TeamChildren();
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await children.killAll();
  for (const server of servers.splice(0)) await server.close();
});

function server(): ScriptedModelServer {
  const started = ScriptedModelServer.start();
  servers.push(started);
  return started;
}

function resultToLead(content: string) {
  return createMessage({ sender: "alice", recipient: "lead", kind: "result", content }, { clock: systemClock, ids: uuidV7Source });
}

function leadTurns(stateDir: string, key: string): string[] {
  return readFileSync(join(stateDir, "agents", "lead.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((record) => record.type === "turn" && record.key === key)
    .map((record) => record.status);
}

describe("the Lead's history after a kill -9", () => {
  // An acknowledged message never comes again from its owner: the turn a dead
  // process left "started" is resumed from the history (AgentRunner.resumeAbandoned).
  test("killed after an event was acked, during its model turn: the next drain finishes that turn", async () => {
    const dirs = teamDirs();
    const store = new FileMailboxStore({ stateDir: dirs.stateDir });
    const message = resultToLead("alice done: schema.sql has a users table");
    await store.send(message);
    const model = server();
    model.push({ identity: "lead", delayMs: 30_000, text: "never delivered: the process is killed while waiting" });

    const first = children.start("drain", dirs, model.url);
    // The ack goes its own way beside the turn's request (sent ahead): the kill waits for both.
    const acked = () => idsIn(takeCensus(dirs.stateDir), "done").includes(message.id);
    expect(await until(() => model.requests.length === 1 && acked(), 10_000)).toBe(true);
    first.proc.kill("SIGKILL");
    await first.finished;
    // The event is in the history and acknowledged (done); its model turn never finished.
    expect(leadTurns(dirs.stateDir, message.id)).toEqual(["started"]);
    expect(idsIn(takeCensus(dirs.stateDir), "done")).toEqual([message.id]);

    model.push({ identity: "lead", text: "noted alice's schema" });
    const second = children.start("drain", dirs, model.url);
    expect(await second.finished).toMatchObject({ exitCode: 0 });
    // The turn is resumed: one more model call, and the turn is recorded as finished.
    expect(leadTurns(dirs.stateDir, message.id)).toEqual(["started", "finished"]);
    expect(model.requests.filter((r) => r.identity === "lead")).toHaveLength(2);
    expect(readTeamFiles(dirs.stateDir).violations).toEqual([]);
    model.assertDone();
  }, 30_000);

  // A batched event turn appends and acks its events one by one before its one
  // model turn: a kill after the k-th event reached the history lands between
  // those appends and acks (the child runs on while the kill is on its way).
  for (const k of [1, 2, 3, 4]) {
    test(`killed after ${k} of a batch's 5 events reached the history: after a drain each is answered once`, async () => {
      const dirs = teamDirs();
      const store = new FileMailboxStore({ stateDir: dirs.stateDir });
      const sent = [];
      for (const name of ["alice", "bob", "carol", "dave", "erin"]) {
        const message = createMessage({ sender: name, recipient: "lead", kind: "result", content: `${name} done` }, { clock: systemClock, ids: uuidV7Source });
        await store.send(message);
        sent.push(message);
      }
      const model = server();
      // Held until the kill: the first process never gets an answer.
      model.push({ identity: "lead", delayMs: 30_000, text: "never delivered" });
      const first = children.start("drain", dirs, model.url);
      const appended = () => first.lines.filter((line) => (line.run as { type?: string } | undefined)?.type === "event").length;
      expect(await until(() => appended() >= k || first.exited, 10_000)).toBe(true);
      first.proc.kill("SIGKILL");
      await first.finished;

      // Whatever the kill left (a turn begun and joined, some acks, a model call
      // on its way), the drain answers each event once: the open turn, then the rest.
      const answered: string[][] = [];
      const respond = (request: { identity?: string; body: { messages: unknown[] } }) => {
        const ids = (request.body.messages as WireMessage[]).flatMap((m) => {
          const envelope = m.role === "user" && typeof m.content === "string" && m.content.startsWith('{"agent_event"') ? JSON.parse(m.content) : undefined;
          return envelope ? [envelope.agent_event.id as string] : [];
        });
        answered.push(ids);
        return { text: `noted ${ids.length}` };
      };
      const drainModel = ScriptedModelServer.start([], { respond });
      servers.push(drainModel);
      const drain = children.start("drain", dirs, drainModel.url);
      expect(await drain.finished).toMatchObject({ exitCode: 0 });
      const files = readTeamFiles(dirs.stateDir);
      expect(files.violations).toEqual([]);
      for (const message of sent) expect(leadTurns(dirs.stateDir, message.id)).toEqual(["started", "finished"]);
      // At most two model turns: the one the kill left open, and one for the events it never took.
      expect(drainModel.requests.length).toBeLessThanOrEqual(2);
      expect(answered.at(-1)!.toSorted()).toEqual(sent.map((m) => m.id).toSorted());
      expect(drainModel.problems).toEqual([]);
    }, 30_000);
  }

  test("killed while a user turn's tool call ran: drain resumes that turn and sends no unanswered tool call", async () => {
    const dirs = teamDirs();
    const model = server();
    model.push({ identity: "lead", toolCalls: [{ name: "shell", arguments: { command: "sleep 2" } }] });

    const run = children.start("run", dirs, model.url, "how full is the disk?");
    expect(await until(() => run.lines.some((line) => (line.run as { type?: string } | undefined)?.type === "tool_call"), 10_000)).toBe(true);
    run.proc.kill("SIGKILL");
    await run.finished;

    const message = resultToLead("alice done: schema.sql has a users table");
    await new FileMailboxStore({ stateDir: dirs.stateDir }).send(message);
    // What the real API checks: it answers 400 to an assistant tool call without its tool result.
    const paired = (request: { body: { messages: unknown[] } }) =>
      expect(unansweredToolCalls(request.body.messages as WireMessage[])).toEqual([]);
    // The killed user turn is resumed first (its tool call answered as unfinished), then the event.
    model.push({ identity: "lead", text: "the disk is 40% full", check: paired });
    model.push({ identity: "lead", text: "noted", check: paired });
    const drain = children.start("drain", dirs, model.url);
    expect(await drain.finished).toMatchObject({ exitCode: 0 });
    expect(leadTurns(dirs.stateDir, message.id)).toEqual(["started", "finished"]);
    model.assertDone();
  }, 30_000);

  test("killed between a self-claiming teammate's claim and its messages: the next runtime sends them once, and the task is worked once", async () => {
    // What a runtime killed right after alice's claim (the task in progress under
    // her name) and before the claim notice and the task message went out leaves.
    const dirs = teamDirs();
    const at = new Date().toISOString();
    await new FileTeamRegistry(dirs.stateDir).put({ name: "alice", role: "developer", state: "idle", createdAtUtc: at, updatedAtUtc: at, autoClaim: true });
    const tasks = new FileTaskStore({ stateDir: dirs.stateDir });
    await tasks.create({ subject: "write the schema" });
    await tasks.create({ subject: "document it", blockedBy: ["t1"] });
    await tasks.claim("t1", "alice");

    // The Lead notes whatever events arrive, in however many batched turns.
    const model = ScriptedModelServer.start([], { respond: () => ({ identity: "lead", text: "noted" }) });
    servers.push(model);
    model.push(
      { identity: "alice", text: "alice did t1", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toStartWith("You claimed task t1") },
      { identity: "alice", text: "alice did t2", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toStartWith("You claimed task t2") },
    );
    const drain = children.start("drain", dirs, model.url);
    expect(await drain.finished).toMatchObject({ exitCode: 0 });
    model.assertDone();
    expect(model.requests.filter((r) => r.identity !== "lead" && r.identity !== "alice")).toEqual([]);
    const files = readTeamFiles(dirs.stateDir);
    expect(files.violations).toEqual([]);
    expect((await tasks.list()).map((t) => [t.id, t.status, t.owner])).toEqual([
      ["t1", "completed", "alice"],
      ["t2", "completed", "alice"],
    ]);
    const toLead = files.messages.filter((m) => m.recipient === "lead");
    // One idle notice: alice worked t1 and t2 in one go, then found nothing left.
    expect(toLead.map((m) => [m.kind, m.taskId]).sort()).toEqual([
      ["idle", undefined],
      ["result", "t1"],
      ["result", "t2"],
      ["task_claimed", "t1"],
      ["task_claimed", "t2"],
    ]);
  }, 30_000);

  test("a teammate a killed runtime left running, with no work left, is idle in team.json after the next runtime", async () => {
    // What a process killed after alice's ack, before its loop found the mailbox
    // empty and set it idle, leaves behind.
    const dirs = teamDirs();
    const at = new Date().toISOString();
    await new FileTeamRegistry(dirs.stateDir).put({ name: "alice", role: "backend", state: "running", createdAtUtc: at, updatedAtUtc: at });
    const model = server();
    const drain = children.start("drain", dirs, model.url);
    expect(await drain.finished).toMatchObject({ exitCode: 0 });
    expect((await new FileTeamRegistry(dirs.stateDir).read()).map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    model.assertDone();
  }, 30_000);

  test("killed in the send of a teammate's result, after its id marker and before the link: the replay still delivers it", async () => {
    const dirs = teamDirs();
    const store = new FileMailboxStore({ stateDir: dirs.stateDir });
    const at = new Date().toISOString();
    await new FileTeamRegistry(dirs.stateDir).put({ name: "alice", role: "backend", state: "running", createdAtUtc: at, updatedAtUtc: at });
    const task = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "write schema.sql" }, { clock: systemClock, ids: uuidV7Source });
    await store.send(task);
    // What `send` leaves when killed between writing the result's id marker
    // (mailboxes/.ids/<id>, created exclusively) and linking it into lead/ready/:
    // a marker no message file shares (the mailbox crash tests count these).
    const resultId = derivedId(task.id, "result");
    const orphan = createMessage({ sender: "alice", recipient: "lead", kind: "result", content: "alice done" }, { clock: systemClock, ids: { next: () => resultId } });
    writeFileSync(new MailboxPaths(dirs.stateDir).idMarker(resultId), serializeMessage(orphan));

    const model = server();
    model.push({ identity: "alice", text: "alice done" }, { identity: "lead", text: "noted alice" });
    const drain = children.start("drain", dirs, model.url);
    expect(await drain.finished).toMatchObject({ exitCode: 0 });
    // The teammate's result is not lost: the Lead has it, in its mailbox and its history.
    expect(readTeamFiles(dirs.stateDir).violations).toEqual([]);
    expect(leadTurns(dirs.stateDir, resultId)).toEqual(["started", "finished"]);
    model.assertDone();
  }, 30_000);
});
