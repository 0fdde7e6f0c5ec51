import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { LEAD } from "../../src/core/agent-name.ts";
import { InvalidAgentNameError, UnknownAgentError } from "../../src/core/errors.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { systemClock } from "../../src/core/clock.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { openOsLock } from "../../src/storage/os-lock.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import type { TeamEvent } from "../../src/team/teammate-runtime.ts";
import { TeammateUnavailableError } from "../../src/team/teammate-runtime.ts";
import { liveInstances, liveObjects } from "../support/collected.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { waitUntil } from "../support/deadline.ts";

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

async function world(script: ScriptedReply[], stateDir?: string) {
  const server = ScriptedModelServer.start(script);
  const root = tempDir("agent-team-");
  const workspace = join(root, "ws");
  mkdirSync(workspace, { recursive: true });
  const dir = stateDir ?? join(root, "state");
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  const teamEvents: TeamEvent[] = [];
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const lead = await buildLead(settings, { stateDir: dir, workspace, teamObserver: (e) => teamEvents.push(e) });
  entry.lead = lead;
  return { server, lead, stateDir: dir, workspace, teamEvents };
}

const key = () => uuidV7Source.next();

/** What alice sent and acknowledged, in order: `send result`, `ack task`, … */
function alicesSendsAndAcks(events: TeamEvent[]): string[] {
  return events.flatMap((e) => (e.type === "mailbox" && ((e.op === "send" && e.from === "alice") || (e.op === "ack" && e.agent === "alice")) ? [`${e.op} ${e.kind}`] : []));
}
const spawn = (name: string, role: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role, prompt } });

describe("TeammateRuntime", () => {
  test("two teammates work in parallel with separate histories; both results, finishing together, reach the Lead in one event turn", async () => {
    // A barrier, not a clock: neither teammate is answered before both asked. Run
    // one after the other, the first would wait for ever and the test time out.
    const asked = { alice: Promise.withResolvers<void>(), bob: Promise.withResolvers<void>() };
    const both = Promise.all([asked.alice.promise, asked.bob.promise]);
    const w = await world([
      { identity: "lead", toolCalls: [spawn("alice", "backend", "write schema.sql"), spawn("bob", "tester", "check schema.sql")] },
      { identity: "lead", text: "Spawned alice and bob." },
      { identity: "alice", check: () => asked.alice.resolve(), gate: both, text: "alice: schema.sql has a users table" },
      { identity: "bob", check: () => asked.bob.resolve(), gate: both, text: "bob: schema looks right" },
      { identity: "lead", text: "noted both" },
    ]);
    const result = await w.lead.runner.run("build the schema with a team", { idempotencyKey: key() });
    expect(result.result).toBe("Spawned alice and bob.");
    const quiet = await runUntilQuiet(w.lead);
    // Each result and each idle notice, in one turn.
    expect(quiet.events).toBe(4);
    expect(quiet.turns.map((t) => t.events!.map((e) => `${e.sender} ${e.kind}`).sort())).toEqual([["alice idle", "alice result", "bob idle", "bob result"]]);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([
      ["alice", "idle"],
      ["bob", "idle"],
    ]);
    const aliceHistory = readFileSync(join(w.stateDir, "agents/alice.jsonl"), "utf8");
    expect(aliceHistory).toContain("write schema.sql");
    expect(aliceHistory).not.toContain("check schema.sql");
    expect(JSON.parse(readFileSync(join(w.stateDir, "team.json"), "utf8")).teammates).toHaveLength(2);
    w.server.assertDone();
  });

  test("a spawned teammate's first request goes out while its spawn waits to store team.json; its turn takes that answer, no second request", async () => {
    const w = await world([
      { identity: "alice", text: "alice: schema.sql written" },
      { identity: "lead", text: "noted" },
    ]);
    // Held as another process would hold it: the spawn cannot name alice in team.json yet.
    const teamLock = openOsLock(join(w.stateDir, "team.lock.flock"))!;
    expect(teamLock.tryTake()).toBe(true);
    let spawned = false;
    const spawning = w.lead.team.spawn("alice", "backend", "write schema.sql").finally(() => (spawned = true));
    for (let waited = 0; w.server.requests.length === 0 && waited < 3_000; waited += 5) await Bun.sleep(5);
    expect(w.server.requests.map((request) => request.identity)).toEqual(["alice"]);
    expect(spawned).toBe(false);
    // Nothing acts on the answer before the spawn is durable: no turn has started.
    const history = join(w.stateDir, "agents/alice.jsonl");
    expect(existsSync(history) ? readFileSync(history, "utf8") : "").toBe("");
    teamLock.give();
    await spawning;
    const quiet = await runUntilQuiet(w.lead);
    expect(quiet.turns.map((t) => t.result.result)).toEqual(["noted"]);
    expect(w.server.requests.filter((request) => request.identity === "alice")).toHaveLength(1);
    expect(readFileSync(join(w.stateDir, "agents/alice.jsonl"), "utf8")).toContain("alice: schema.sql written");
    w.server.assertDone();
  });

  test("the last teammate's idle state is told before the Lead's event turn answers it, even while team.json's write of it waits", async () => {
    const server = ScriptedModelServer.start([
      { identity: "alice", text: "alice: done" },
      { identity: "lead", text: "noted" },
    ]);
    const root = tempDir("agent-team-");
    const workspace = join(root, "ws");
    mkdirSync(workspace, { recursive: true });
    const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode: "bypassPermissions" }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
    // One log of both kinds of event, in the order they were told: what a screen or a stream shows.
    const told: string[] = [];
    const lead = await buildLead(settings, {
      stateDir: join(root, "state"),
      workspace,
      observer: (e) => {
        if (e.type === "assistant" || e.type === "event_turn") told.push(`${e.agent} ${e.type}`);
      },
      teamObserver: (e) => {
        if (e.type === "teammate") told.push(`${e.name} ${e.state}`);
      },
    });
    open.push({ server, lead });
    await lead.team.spawn("alice", "backend", "write schema.sql");
    for (let waited = 0; !told.includes("alice running") && waited < 3_000; waited += 5) await Bun.sleep(5);
    // Held as another process would hold it: alice's idle state cannot be written until the Lead has answered.
    const teamLock = openOsLock(join(root, "state", "team.lock.flock"))!;
    expect(teamLock.tryTake()).toBe(true);
    try {
      expect((await runUntilQuiet(lead)).turns.map((t) => t.result.result)).toEqual(["noted"]);
    } finally {
      teamLock.give();
    }
    expect(told).toEqual(["alice running", "alice assistant", "alice idle", "lead event_turn", "lead assistant"]);
    await lead.close();
    server.assertDone();
  });

  test("with no TeammateIdle hook the idle notice goes out with the result, before the ack: the Lead's turn gets both, the result first", async () => {
    const w = await world([
      { identity: "alice", text: "alice: done" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    const quiet = await runUntilQuiet(w.lead);
    expect(quiet.turns.map((t) => (t.events ?? []).map((e) => e.kind))).toEqual([["result", "idle"]]);
    // Both sends before the ack of alice's task; the store's one take of its lock made the result first.
    expect(alicesSendsAndAcks(w.teamEvents)).toEqual(["send result", "send idle", "ack task"]);
    await w.lead.close();
    w.server.assertDone();
  });

  test("a message sent to a teammate while it works keeps its idle notice for after the ack: told once, after its last result", async () => {
    const answer = Promise.withResolvers<void>();
    const asked = Promise.withResolvers<void>();
    const w = await world([
      { identity: "alice", check: () => asked.resolve(), gate: answer.promise, text: "alice: schema written" },
      { identity: "alice", text: "alice: indexes added" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    await asked.promise;
    // Sent while her only model call is under way: it joins no turn, it waits in her mailbox.
    await w.lead.team.send(LEAD, "alice", "add indexes too");
    answer.resolve();
    const quiet = await runUntilQuiet(w.lead);
    const told = quiet.turns.flatMap((t) => (t.events ?? []).map((e) => `${e.kind}: ${e.content}`));
    expect(told).toEqual(["result: alice: schema written", "result: alice: indexes added", "idle: alice is idle"]);
    expect(alicesSendsAndAcks(w.teamEvents)).toEqual(["send result", "ack task", "send result", "send idle", "ack message"]);
    await w.lead.close();
    w.server.assertDone();
  });

  test("a teammate that told the Lead it is idle is no longer work the Lead waits for, while team.json still waits to say so", async () => {
    const answer = Promise.withResolvers<void>();
    const asked = Promise.withResolvers<void>();
    const w = await world([
      { identity: "alice", check: () => asked.resolve(), gate: answer.promise, text: "alice: done" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    await asked.promise;
    const stateOf = () => JSON.parse(readFileSync(join(w.stateDir, "team.json"), "utf8")).teammates.find((t: { name: string }) => t.name === "alice").state;
    for (let waited = 0; stateOf() !== "running" && waited < 3_000; waited += 5) await Bun.sleep(5);
    expect(stateOf()).toBe("running");
    expect(w.lead.team.hasPendingWork()).toBe(true);
    // Held as another process would hold it: alice cannot store that she is idle.
    const teamLock = openOsLock(join(w.stateDir, "team.lock.flock"))!;
    expect(teamLock.tryTake()).toBe(true);
    answer.resolve();
    try {
      const idleSent = () => w.teamEvents.some((e) => e.type === "mailbox" && e.op === "send" && e.kind === "idle");
      for (let waited = 0; (!idleSent() || w.lead.team.hasPendingWork()) && waited < 3_000; waited += 5) await Bun.sleep(5);
      expect(idleSent()).toBe(true);
      // The Lead's quiet wait (and its event turn's batching) is over; the record is not written yet.
      expect(w.lead.team.hasPendingWork()).toBe(false);
      expect(stateOf()).toBe("running");
      expect(w.lead.team.list().find((t) => t.name === "alice")?.state).toBe("idle");
    } finally {
      teamLock.give();
    }
    expect((await runUntilQuiet(w.lead)).turns.map((t) => t.result.result)).toEqual(["noted"]);
    await w.lead.close();
    expect(stateOf()).toBe("idle");
    w.server.assertDone();
  });

  test("a message sent to a teammate while it stores that it is idle makes it work the Lead waits for again, before its loop looks", async () => {
    const w = await world([
      { identity: "alice", text: "alice: done" },
      { identity: "alice", text: "alice: indexes added" },
      { identity: "lead", text: "noted" },
    ]);
    // Held as another process would hold it: alice's loop waits to store that she is idle.
    const teamLock = openOsLock(join(w.stateDir, "team.lock.flock"))!;
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    expect(teamLock.tryTake()).toBe(true);
    try {
      const idleSent = () => w.teamEvents.some((e) => e.type === "mailbox" && e.op === "send" && e.kind === "idle");
      await waitUntil(() => idleSent() && !w.lead.team.hasPendingWork(), "alice to tell the Lead she is idle");
      await w.lead.team.send(LEAD, "alice", "add indexes too");
      // Her loop is still in its last store call and will go round for the message: a quiet
      // check now must not end the run (it did, and closing put the message back unanswered).
      expect(w.lead.team.hasPendingWork()).toBe(true);
    } finally {
      teamLock.give();
    }
    const quiet = await runUntilQuiet(w.lead);
    expect(quiet.turns.flatMap((t) => (t.events ?? []).map((e) => `${e.kind}: ${e.content}`))).toEqual([
      "result: alice: done",
      "idle: alice is idle",
      "result: alice: indexes added",
      "idle: alice is idle",
    ]);
    await w.lead.close();
    w.server.assertDone();
  });

  test("a teammate spawned to work at once is stored running with its task sent: one team.json write before its turn, one running event", async () => {
    const answer = Promise.withResolvers<void>();
    const w = await world([
      { identity: "alice", gate: answer.promise, text: "alice: done" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    // Durable when the spawn returns: the record says running, with no task pending.
    const stored = JSON.parse(readFileSync(join(w.stateDir, "team.json"), "utf8")).teammates;
    expect(stored.map((t: { name: string; state: string; pendingTaskId?: string }) => [t.name, t.state, t.pendingTaskId])).toEqual([["alice", "running", undefined]]);
    answer.resolve();
    expect((await runUntilQuiet(w.lead)).turns.map((t) => t.result.result)).toEqual(["noted"]);
    expect(w.teamEvents.filter((e) => e.type === "teammate").map((e) => (e as { state: string }).state)).toEqual(["running", "idle"]);
    w.server.assertDone();
  });

  test("a result names the input it answers: in the message, the event and the Lead's envelope", async () => {
    const w = await world([
      { identity: "alice", text: "alice: done" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.team.spawn("alice", "backend", "write schema.sql");
    const quiet = await runUntilQuiet(w.lead);
    const task = w.teamEvents.find((e) => e.type === "mailbox" && e.op === "send" && e.agent === "alice" && e.kind === "task");
    expect(task).toBeDefined();
    const taskId = (task as { id: string }).id;
    expect(quiet.turns.map((t) => t.event?.inReplyTo)).toEqual([taskId]);
    // The result, then the idle notice that follows it: both name the task.
    const [result, idle] = w.server.requests.at(-1)!.body.messages.slice(-2).map((m) => JSON.parse(String(m.content)));
    expect(result.agent_event).toMatchObject({ from: "alice", kind: "result", in_reply_to: taskId });
    expect(idle).toMatchObject({ agent_event: { from: "alice", kind: "idle", in_reply_to: taskId }, content: "alice is idle" });
    w.server.assertDone();
  });

  test("a second message to an idle teammate rebuilds its runner from disk: the request holds the first turn", async () => {
    const w = await world([
      { identity: "lead", toolCalls: [spawn("alice", "writer", "first task")] },
      { identity: "lead", text: "ok" },
      { identity: "alice", text: "first done" },
      { identity: "lead", toolCalls: [{ name: "send_message", arguments: { to: "alice", content: "second task" } }] },
      { identity: "lead", text: "sent" },
      {
        identity: "alice",
        text: "second done",
        check: (r) => {
          const contents = r.body.messages.map((m) => String(m.content));
          expect(contents.some((c) => c.includes("first task"))).toBe(true);
          expect(contents.some((c) => c.includes("first done"))).toBe(true);
          expect(contents.at(-1)).toContain("second task");
        },
      },
      { identity: "lead", text: "all done" },
    ]);
    await w.lead.runner.run("go", { idempotencyKey: key() });
    const quiet = await runUntilQuiet(w.lead);
    expect(quiet.turns.map((t) => t.result.result)).toEqual(["sent", "all done"]);
    expect(w.teamEvents.filter((e) => e.type === "teammate" && e.name === "alice").map((e) => (e as { state: string }).state)).toEqual([
      "running",
      "idle",
      "running",
      "idle",
    ]);
    w.server.assertDone();
  });

  test("an idle teammate keeps no runner: its history file is not held open until its next message", async () => {
    const w = await world([
      { identity: "lead", toolCalls: [spawn("alice", "writer", "first task")] },
      { identity: "lead", text: "ok" },
      { identity: "alice", text: "first done" },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.runner.run("go", { idempotencyKey: key() });
    await runUntilQuiet(w.lead);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    const held = (file: string) =>
      readdirSync("/proc/self/fd").some((fd) => {
        try {
          return readlinkSync(join("/proc/self/fd", fd)) === file;
        } catch {
          return false; // closed between the listing and the look
        }
      });
    // The Lead's own history stays open: the check can see a held file.
    expect(held(join(w.stateDir, "agents/lead.jsonl"))).toBe(true);
    expect(held(join(w.stateDir, "agents/alice.jsonl"))).toBe(false);
    w.server.assertDone();
  });

  test("an idle teammate's turns leave no copy of its history behind: the runtime holds the histories open now, not every one it opened", async () => {
    // Each message to an idle teammate rebuilds its runner, which opens its history
    // again (the whole conversation read back); the one closed at idle must go.
    const turns = 12;
    const w = await world(Array.from({ length: turns }, (_, i) => [{ identity: "alice", text: `done ${i}` }, { identity: "lead", text: "noted" }]).flat());
    await w.lead.team.spawn("alice", "writer", "task 0");
    await runUntilQuiet(w.lead);
    const live = () => liveInstances("HistoryStore");
    const before = await live();
    for (let i = 1; i < turns; i++) {
      await w.lead.team.send(LEAD, "alice", `task ${i}`);
      await runUntilQuiet(w.lead);
    }
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    // Before, every rebuild's history stayed in the runtime's list until close: 11 more.
    expect((await live()) - before).toBeLessThan(3);
    w.server.assertDone();
  });

  test("an idle teammate keeps no handle of the loop that ran: the AbortControllers alive do not grow with idle teammates", async () => {
    const added = 8;
    const w = await world(Array.from({ length: added + 1 }, (_, i) => [{ identity: `t${i}`, text: `done ${i}` }, { identity: "lead", text: "noted" }]).flat());
    const spawnIdle = async (i: number) => {
      await w.lead.team.spawn(`t${i}`, "worker", `task ${i}`);
      await runUntilQuiet(w.lead);
    };
    const controllers = () => liveObjects("AbortController");
    await spawnIdle(0);
    const before = await controllers();
    for (let i = 1; i <= added; i++) await spawnIdle(i);
    expect(w.lead.team.list().every((t) => t.state === "idle")).toBe(true);
    // Before, each idle teammate's finished job kept its controller (and signal, closures): 8 more.
    expect((await controllers()) - before).toBeLessThan(3);
    w.server.assertDone();
  });

  test("concurrent spawns of one name: exactly one wins", async () => {
    const w = await world([{ identity: "alice", text: "done" }, { identity: "lead", text: "noted" }]);
    const results = await Promise.allSettled([
      w.lead.team.spawn("alice", "a", "task one"),
      w.lead.team.spawn("alice", "b", "task two"),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(TeammateUnavailableError);
    // done/ is made by the first ack: none yet.
    const count = (state: string) => (existsSync(join(w.stateDir, "mailboxes/alice", state)) ? readdirSync(join(w.stateDir, "mailboxes/alice", state)).length : 0);
    expect(count("ready") + count("processing") + count("done")).toBe(1);
    await runUntilQuiet(w.lead);
    w.server.assertDone();
  });

  test("invalid, reserved and unknown names fail before any work", async () => {
    const w = await world([]);
    await expect(w.lead.team.spawn("Bob", "r", "p")).rejects.toBeInstanceOf(InvalidAgentNameError);
    await expect(w.lead.team.spawn("../x", "r", "p")).rejects.toBeInstanceOf(InvalidAgentNameError);
    await expect(w.lead.team.spawn("con", "r", "p")).rejects.toBeInstanceOf(InvalidAgentNameError);
    await expect(w.lead.team.spawn("lead", "r", "p")).rejects.toBeInstanceOf(InvalidAgentNameError);
    await expect(w.lead.team.send("lead", "ghost", "hi")).rejects.toBeInstanceOf(UnknownAgentError);
    expect(readdirSync(w.stateDir).filter((n) => n === "mailboxes" || n === "team.json")).toEqual([]);
    w.server.assertDone();
  });

  test("a failing teammate: input quarantined, state failed, the Lead told, later messages refused", async () => {
    const w = await world([
      { identity: "alice", status: 401, body: { error: { message: "bad key for alice" } } },
      { identity: "lead", text: "alice failed, noted", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("failed") },
    ]);
    await w.lead.team.spawn("alice", "backend", "do it");
    const quiet = await runUntilQuiet(w.lead);
    expect(quiet.events).toBe(1);
    const task = w.teamEvents.find((e) => e.type === "mailbox" && e.op === "send" && e.agent === "alice");
    expect(quiet.turns[0]!.event?.inReplyTo).toBe((task as { id: string }).id);
    const [alice] = w.lead.team.list();
    expect(alice).toMatchObject({ name: "alice", state: "failed" });
    expect(readdirSync(join(w.stateDir, "mailboxes/alice/quarantine")).filter((n) => !n.endsWith(".reason.json"))).toHaveLength(1);
    await expect(w.lead.team.send("lead", "alice", "again")).rejects.toBeInstanceOf(TeammateUnavailableError);
    w.server.assertDone();
  });

  test("close mid-task releases the work; a new runtime on the state dir restores the team and finishes it", async () => {
    // Alice's model call is never answered: once the server has it, she is mid-task.
    const first = await world([{ identity: "alice", gate: new Promise(() => {}), text: "never seen" }]);
    await first.lead.team.spawn("alice", "backend", "long task");
    await waitUntil(() => first.server.requests.some((request) => request.identity === "alice"), "alice's model call");
    await first.lead.close();
    expect(first.lead.team.list()[0]!.state).toBe("shutdown");
    expect(readdirSync(join(first.stateDir, "mailboxes/alice/ready"))).toHaveLength(1);
    await expect(first.lead.team.spawn("bob", "x", "y")).rejects.toBeInstanceOf(TeammateUnavailableError);

    const second = await world([{ identity: "alice", text: "finished after restore" }, { identity: "lead", text: "great" }], first.stateDir);
    const quiet = await runUntilQuiet(second.lead);
    expect(quiet.turns.map((t) => t.event!.content)).toEqual(["finished after restore"]);
    expect(second.lead.team.list()[0]).toMatchObject({ name: "alice", state: "idle" });
    second.server.assertDone();
  });

  test("a spawn killed before its first task went out is undone on restore; one whose task went out is kept", async () => {
    const root = tempDir("agent-team-spawn-");
    const stateDir = join(root, "state");
    const at = new Date().toISOString();
    // What a runtime killed between writing team.json and sending the task leaves (ghost),
    // and one killed just after sending it (alice).
    const aliceTask = uuidV7Source.next();
    const registry = new FileTeamRegistry(stateDir);
    await registry.put({ name: "ghost", role: "r", state: "idle", createdAtUtc: at, updatedAtUtc: at, pendingTaskId: uuidV7Source.next() });
    await registry.put({ name: "alice", role: "r", state: "idle", createdAtUtc: at, updatedAtUtc: at, pendingTaskId: aliceTask });
    await new FileMailboxStore({ stateDir }).send(
      createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "the task" }, { clock: systemClock, ids: { next: () => aliceTask } }),
    );
    const w = await world([{ identity: "alice", text: "done" }, { identity: "lead", text: "noted" }], stateDir);
    expect(w.lead.team.list().map((t) => t.name)).toEqual(["alice"]);
    expect((await new FileTeamRegistry(stateDir).read()).map((t) => [t.name, t.pendingTaskId])).toEqual([["alice", undefined]]);
    await runUntilQuiet(w.lead);
    // The name is free again for the Lead.
    // Scripted first: the teammate may ask the model before spawn returns.
    w.server.push({ identity: "ghost", text: "ok" }, { identity: "lead", text: "fine" });
    await w.lead.team.spawn("ghost", "r", "try again");
    await runUntilQuiet(w.lead);
    w.server.assertDone();
  });
});
