import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { expectOneLineError, scriptedServers } from "./run-fixture.ts";
import { TeamList, teamSetup } from "./team-fixture.ts";

// Team protocol pieces on the compiled binary and the scripted server.

const startServer = scriptedServers();
const spawn = (name: string, role: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role, prompt } });

/** The Lead spawns alice, she says hello, the Lead notes it. */
const helloScript = () => [
  { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello.")] },
  { identity: "lead", text: "alice is on it." },
  { identity: "alice", text: "hello" },
  { identity: "lead", text: "alice said hello." },
];

/** The `agent_event` headers of the Lead-side envelopes in a request. */
function envelopesOf(messages: Record<string, unknown>[]): Record<string, unknown>[] {
  return messages.flatMap((message) => {
    if (message.role !== "user" || typeof message.content !== "string" || !message.content.startsWith('{"agent_event"')) return [];
    return [(JSON.parse(message.content) as { agent_event: Record<string, unknown> }).agent_event];
  });
}

describe("reply ids", () => {
  test("alice's result names her input: the Lead's event turn sees in_reply_to = the task's message id", async () => {
    const server = startServer(helloScript());
    const { run, sessionDir } = teamSetup();
    const result = await run(["Get alice to say hello.", "--base-url", server.url, "--permission-mode", "acceptEdits"]);
    expect({ code: result.code, stderr: result.stderr.includes("Error") ? result.stderr : "" }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    // Alice's one input, acked into done/ under its id.
    const done = readdirSync(join(sessionDir(), "mailboxes", "alice", "done")).filter((n) => n.endsWith(".json"));
    expect(done).toHaveLength(1);
    const taskId = done[0]!.replace(/\.json$/, "");
    const leadRequests = server.requests.filter((request) => request.identity === "lead");
    const envelopes = envelopesOf(leadRequests.at(-1)!.body.messages);
    // Her result, and the idle notice after it: both name the task.
    expect(envelopes).toHaveLength(2);
    expect(envelopes[0]).toMatchObject({ from: "alice", kind: "result", in_reply_to: taskId });
    expect(envelopes[0]!.id).not.toBe(taskId);
    expect(envelopes[1]).toMatchObject({ from: "alice", kind: "idle", in_reply_to: taskId });
  });
});

const FAIL_ALICE = { identity: "alice", status: 401, body: { error: { message: "bad key for alice" } } } as const;
const runArgs = (prompt: string, url: string) => [prompt, "--base-url", url, "--permission-mode", "acceptEdits"];

/** A session where alice failed on her first task (the Lead noted it). */
async function withFailedAlice() {
  const server = startServer([
    { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello.")] },
    { identity: "lead", text: "alice is on it." },
    FAIL_ALICE,
    { identity: "lead", text: "alice failed." },
  ]);
  const setup = teamSetup();
  const result = await setup.run(runArgs("Get alice to say hello.", server.url));
  expect(result.code).toBe(0);
  server.assertDone();
  const list = TeamList.parse(JSON.parse((await setup.agent("team", "list", "--json")).stdout));
  expect(list.teammates.map((t) => [t.name, t.state])).toEqual([["alice", "failed"]]);
  return setup;
}

describe("freeing a teammate's name", () => {
  test("spawn_teammate over a failed teammate replaces it and says so; the new one starts with an empty history", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello.")] },
      { identity: "lead", text: "alice is on it." },
      FAIL_ALICE,
      { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello again.")] },
      { identity: "lead", text: "respawned alice." },
      {
        identity: "alice",
        text: "hello",
        // A fresh history: only its new task.
        check: (request) => expect(request.body.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["Say hello again."]),
      },
      { identity: "lead", text: "alice said hello." },
    ]);
    const { run, sessionDir, agent } = teamSetup();
    const result = await run(runArgs("Get alice to say hello.", server.url));
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "alice said hello.\n" });
    server.assertDone();
    const respawn = server.requests.filter((r) => r.identity === "lead")[3]!;
    const toolResult = String(respawn.body.messages.at(-1)!.content);
    expect(toolResult).toMatch(/^spawned alice \(backend\).*; replaced the failed teammate alice \(its history is kept at agents\/removed\/alice-[0-9T-]+Z\.jsonl\)$/);
    const archived = readdirSync(join(sessionDir(), "agents", "removed"));
    expect(archived).toHaveLength(1);
    expect(readFileSync(join(sessionDir(), "agents", "removed", archived[0]!), "utf8")).toContain("Say hello.");
    const list = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(list.teammates.map((t) => [t.name, t.state, t.failure])).toEqual([["alice", "idle", undefined]]);
  });

  test("agent team reset: failed -> idle keeping history; a message then wakes it under `agent drain`", async () => {
    const { agent, drain, sessionDir } = await withFailedAlice();
    const before = readFileSync(join(sessionDir(), "agents", "alice.jsonl"), "utf8");
    const reset = await agent("team", "reset", "alice");
    expect({ code: reset.code, stderr: reset.stderr }).toEqual({ code: 0, stderr: "" });
    expect(reset.stdout).toMatch(/^reset alice: failed -> idle in session [0-9a-f-]+, history kept/);
    const list = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(list.teammates.map((t) => [t.name, t.state, t.failure])).toEqual([["alice", "idle", undefined]]);
    expect(readFileSync(join(sessionDir(), "agents", "alice.jsonl"), "utf8")).toBe(before);
    // Reset twice: it is idle now, not failed.
    expectOneLineError(await agent("team", "reset", "alice"), 2, /teammate alice is idle, not failed; only a failed teammate can be reset/);

    const sent = await agent("mailbox", "send", "--to", "alice", "--from", "lead", "--content", "Try again.");
    expect(sent.code).toBe(0);
    const server = startServer([
      { identity: "alice", text: "hello after reset", check: (request) => expect(JSON.stringify(request.body.messages)).toContain("Say hello.") },
      { identity: "lead", text: "good." },
    ]);
    const drained = await drain(["--base-url", server.url]);
    expect(drained.code).toBe(0);
    server.assertDone();
    const after = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(after.teammates.map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
  });

  test("agent team rm: a failed teammate is removed, its history kept aside; a later spawn of the name says it was removed", async () => {
    const { agent, run, sessionDir } = await withFailedAlice();
    const rm = await agent("team", "rm", "alice", "--json");
    expect({ code: rm.code, stderr: rm.stderr }).toEqual({ code: 0, stderr: "" });
    const out = JSON.parse(rm.stdout);
    expect(out).toMatchObject({ removed: "alice", state: "failed", quarantined: [] });
    expect(out.history).toMatch(/^agents\/removed\/alice-.+\.jsonl$/);
    expect(existsSync(join(sessionDir(), out.history))).toBe(true);
    expect(existsSync(join(sessionDir(), "agents", "alice.jsonl"))).toBe(false);
    expect(TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout)).teammates).toEqual([]);
    expectOneLineError(await agent("team", "rm", "alice"), 6, /alice/);

    const server = startServer([
      { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello.")] },
      {
        identity: "lead",
        text: "alice is back.",
        check: (request) =>
          expect(String(request.body.messages.at(-1)!.content)).toContain("a teammate named alice was removed earlier; this is a new one with an empty history"),
      },
      { identity: "alice", text: "hello", check: (request) => expect(request.body.messages.filter((m) => m.role === "user")).toHaveLength(1) },
      { identity: "lead", text: "done." },
    ]);
    const again = await run(["-c", ...runArgs("Spawn alice again.", server.url)]);
    expect(again.code).toBe(0);
    server.assertDone();
  });

  test("agent team rm refuses unfinished work unless --force (then it goes to quarantine/), and a live session", async () => {
    const { agent, sessionDir } = await withFailedAlice();
    const dir = sessionDir();
    // As a runtime killed mid-task leaves it: "running", with a message waiting.
    const team = JSON.parse(readFileSync(join(dir, "team.json"), "utf8"));
    team.teammates[0].state = "running";
    delete team.teammates[0].failure;
    writeFileSync(join(dir, "team.json"), JSON.stringify(team));
    expect((await agent("mailbox", "send", "--to", "alice", "--from", "lead", "--content", "More.")).code).toBe(0);
    expectOneLineError(await agent("team", "rm", "alice"), 2, /teammate alice has unfinished work \(state running, 1 message\(s\).*pass --force/);

    const lock = await RuntimeLock.acquire(dir);
    try {
      expectOneLineError(await agent("team", "rm", "alice", "--force"), 4, /is running and owns its team; stop it/);
    } finally {
      await lock.release();
    }

    const forced = await agent("team", "rm", "alice", "--force");
    expect({ code: forced.code, stderr: forced.stderr }).toEqual({ code: 0, stderr: "" });
    expect(forced.stdout).toMatch(/^removed alice \(running\) from session .*; history kept at agents\/removed\/alice-.*; 1 unfinished message\(s\) moved to its quarantine\/\n$/);
    const quarantine = readdirSync(join(dir, "mailboxes", "alice", "quarantine"));
    // The first task's failure and the forced one, each with its reason.
    expect(quarantine.filter((n) => n.endsWith(".reason.json"))).toHaveLength(2);
    expect(readdirSync(join(dir, "mailboxes", "alice", "ready"))).toEqual([]);
  });
});

describe("agent team send", () => {
  test("the operator's message reaches alice in an envelope from \"user\"; her answer goes back to \"user\" under `agent drain`, not to the Lead", async () => {
    const server = startServer(helloScript());
    const { run, agent, drain, sessionDir } = teamSetup();
    expect((await run(runArgs("Get alice to say hello.", server.url))).code).toBe(0);
    server.assertDone();

    const sent = await agent("team", "send", "alice", "Say bye.", "--json");
    expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: "" });
    const message = JSON.parse(sent.stdout);
    expect(message).toMatchObject({ sender: "user", recipient: "alice", kind: "message", content: "Say bye." });
    expect(JSON.parse(readFileSync(join(sessionDir(), "mailboxes", "alice", "ready", `${message.id}.json`), "utf8")).sender).toBe("user");

    const next = startServer([
      {
        identity: "alice",
        text: "bye",
        check: (request) => {
          expect(envelopesOf(request.body.messages).at(-1)).toMatchObject({ id: message.id, from: "user", kind: "message" });
          expect(JSON.parse(String(request.body.messages.at(-1)!.content)).content).toBe("Say bye.");
        },
      },
      // The Lead hears only that she is idle again, naming the operator's message.
      { identity: "lead", text: "noted", check: (request) => expect(envelopesOf(request.body.messages).at(-1)).toMatchObject({ from: "alice", kind: "idle", in_reply_to: message.id }) },
    ]);
    expect((await drain(["--base-url", next.url])).code).toBe(0);
    next.assertDone();
    const answers = readdirSync(join(sessionDir(), "mailboxes", "user", "ready")).filter((n) => n.endsWith(".json"));
    expect(answers.map((n) => JSON.parse(readFileSync(join(sessionDir(), "mailboxes", "user", "ready", n), "utf8")))).toMatchObject([
      { sender: "alice", recipient: "user", kind: "result", content: "bye", inReplyTo: message.id },
    ]);
    expect(readdirSync(join(sessionDir(), "mailboxes", "lead", "ready"))).toEqual([]);
    const toLead = readdirSync(join(sessionDir(), "mailboxes", "lead", "done")).map((n) => JSON.parse(readFileSync(join(sessionDir(), "mailboxes", "lead", "done", n), "utf8")));
    expect(toLead.filter((m) => m.inReplyTo === message.id).map((m) => m.kind)).toEqual(["idle"]);
  });

  test("refused: unknown teammate, reserved names, a failed teammate, no text", async () => {
    const { agent } = await withFailedAlice();
    expectOneLineError(await agent("team", "send", "bob", "hi"), 6, /bob/);
    expectOneLineError(await agent("team", "send", "user", "hi"), 2, /reserved for the operator/);
    expectOneLineError(await agent("team", "send", "lead", "hi"), 2, /reserved for the Lead/);
    expectOneLineError(await agent("team", "send", "alice", "hi"), 2, /alice is failed.*agent team reset alice/);
    expectOneLineError(await agent("team", "send", "alice"), 2, /give the message as TEXT/);
  });
});
