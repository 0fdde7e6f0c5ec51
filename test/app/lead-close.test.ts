import { afterEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import type { FsOps } from "../../src/storage/fs-ops.ts";
import type { TeamEvent } from "../../src/team/teammate-runtime.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// Storage failures around a teammate's finished work and around close, injected
// into the mailbox's real file-system calls.

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

/** The real fs whose rename from `from` to `to` (path fragments) fails the next `times` times (`state.left`: more later). */
function failingRenames(from: string, to: string, times: number) {
  const state = { failed: 0, left: times };
  const ops: FsOps = {
    ...fs,
    renameSync: (source: fs.PathLike, target: fs.PathLike) => {
      if (state.left > 0 && String(source).includes(from) && String(target).includes(to)) {
        state.left -= 1;
        state.failed += 1;
        throw Object.assign(new Error(`EIO: i/o error, rename '${source}'`), { code: "EIO", syscall: "rename" });
      }
      fs.renameSync(source, target);
    },
  };
  return { ops, state };
}

async function world(script: ScriptedReply[], mailboxFs: FsOps) {
  const server = ScriptedModelServer.start(script);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const root = tempDir("agent-lead-close-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const stateDir = join(root, "state");
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  const teamEvents: TeamEvent[] = [];
  const lead = await buildLead(settings, { stateDir, workspace, mailboxFs, teamObserver: (e) => teamEvents.push(e) });
  entry.lead = lead;
  return { server, lead, stateDir, workspace, teamEvents };
}

const spawn = (name: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role: "worker", prompt } });
/** The files in a mailbox state's directory; done/ and quarantine/ are made when first used, so none yet is none. */
const files = (stateDir: string, agent: string, state: string) => (existsSync(join(stateDir, "mailboxes", agent, state)) ? readdirSync(join(stateDir, "mailboxes", agent, state)) : []);

/** The Lead spawns alice, who writes notes.md, while her ack's rename fails `times` times; run until quiet. */
async function notesWrittenWithAcksFailing(times: number) {
  const failing = failingRenames("/alice/processing/", "/alice/done/", times);
  const w = await world(
    [
      { identity: "lead", toolCalls: [spawn("alice", "write notes.md")] },
      { identity: "lead", text: "spawned" },
      { identity: "alice", text: "notes.md written" },
      { identity: "lead", text: "noted" },
    ],
    failing.ops,
  );
  await w.lead.runner.run("get notes written", { idempotencyKey: uuidV7Source.next() });
  return { w, failing, quiet: await runUntilQuiet(w.lead) };
}

describe("a teammate's ack that fails after its result was delivered", () => {
  test("is retried: the input goes to done/, never to quarantine, and the teammate stays well", async () => {
    const { w, failing, quiet } = await notesWrittenWithAcksFailing(1);
    expect(quiet.turns.map((t) => t.event?.content)).toEqual(["notes.md written"]);
    expect(failing.state.failed).toBe(1);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    expect(files(w.stateDir, "alice", "quarantine")).toEqual([]);
    expect(files(w.stateDir, "alice", "done")).toHaveLength(1);
    expect(files(w.stateDir, "alice", "processing")).toEqual([]);
    w.server.assertDone();
  });

  test("fails for good after the idle notice went out with the result: the message goes back, and the next runtime's replay acks it, telling the Lead nothing twice", async () => {
    const { w, failing, quiet: first } = await notesWrittenWithAcksFailing(3);
    expect(first.turns.flatMap((t) => t.events ?? [t.event!]).map((e) => `${e.kind}: ${e.content}`)).toEqual(["result: notes.md written", "idle: alice is idle"]);
    // Every attempt failed: back in ready/, as a process killed before its ack leaves it in processing/.
    expect(failing.state.failed).toBe(3);
    expect(files(w.stateDir, "alice", "ready")).toHaveLength(1);
    await w.lead.close();

    // The next runtime on the same state: alice's turn is in her history, so it replays without the model.
    const server = ScriptedModelServer.start([]);
    open.push({ server });
    const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode: "bypassPermissions" }, env: { OPENAI_API_KEY: "sk-test" }, workspace: w.workspace });
    const next = await buildLead(settings, { stateDir: w.stateDir, workspace: w.workspace });
    open.push({ server, lead: next });
    expect((await runUntilQuiet(next)).turns).toEqual([]);
    for (const state of ["ready", "processing", "quarantine"]) expect(files(w.stateDir, "alice", state)).toEqual([]);
    expect(files(w.stateDir, "alice", "done")).toHaveLength(1);
    // The result and the notice once each, both answered.
    expect(files(w.stateDir, "lead", "ready")).toEqual([]);
    expect(files(w.stateDir, "lead", "done")).toHaveLength(2);
    server.assertDone();
  });

  test("acked with the next message's claim in one call, whose claim fails: the ack is retried alone, the next one claimed after it", async () => {
    const claims = failingRenames("/alice/ready/", "/alice/processing/", 0);
    const asked = Promise.withResolvers<void>();
    const second = Promise.withResolvers<void>();
    const w = await world(
      [
        { identity: "alice", check: () => asked.resolve(), gate: second.promise, text: "first done" },
        { identity: "lead", text: "noted" },
        { identity: "alice", text: "second done" },
        { identity: "lead", text: "noted" },
      ],
      claims.ops,
    );
    await w.lead.team.spawn("alice", "worker", "first task");
    await asked.promise;
    // In ready/ when the first is finished: its claim is the second half of the ack's call.
    await w.lead.team.send("lead", "alice", "second task");
    claims.state.left = 1;
    second.resolve();

    const quiet = await runUntilQuiet(w.lead);
    // One Lead turn or two, as the results' timing has it (a batch waits briefly for more).
    // One idle notice: she ran out of work once, after the second.
    expect(quiet.turns.flatMap((t) => t.events ?? [t.event!]).map((e) => e.content)).toEqual(["first done", "second done", "alice is idle"]);
    expect(claims.state.failed).toBe(1);
    const mail = w.teamEvents.flatMap((e) => (e.type === "mailbox" && e.agent === "alice" ? [`${e.op} ${e.kind}`] : []));
    expect(mail).toEqual(["send task", "claim task", "send message", "ack task", "claim message", "ack message"]);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "idle"]]);
    for (const state of ["ready", "processing", "quarantine"]) expect(files(w.stateDir, "alice", state)).toEqual([]);
    expect(files(w.stateDir, "alice", "done")).toHaveLength(2);
  });
});

describe("closing the runtime", () => {
  test("a close that failed keeps what failed: a second close() releases the teammate's message and marks it shut down", async () => {
    const failing = failingRenames("/alice/processing/", "/alice/ready/", 1);
    let aliceAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      aliceAsked = resolve;
    });
    const w = await world(
      [
        { identity: "lead", toolCalls: [spawn("alice", "a long job")] },
        { identity: "lead", text: "spawned" },
        // Never answered before close: alice is mid-turn with her task in processing/.
        { identity: "alice", delayMs: 60_000, text: "too late", check: () => aliceAsked() },
      ],
      failing.ops,
    );
    await w.lead.runner.run("start the long job", { idempotencyKey: uuidV7Source.next() });
    await asked;
    expect(files(w.stateDir, "alice", "processing")).toHaveLength(1);

    await expect(w.lead.close()).rejects.toThrow(/EIO/);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "running"]]);
    await w.lead.close();
    expect(failing.state.failed).toBe(1);
    expect(files(w.stateDir, "alice", "processing")).toEqual([]);
    expect(files(w.stateDir, "alice", "ready")).toHaveLength(1);
    expect(w.lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "shutdown"]]);
    expect(w.teamEvents).toContainEqual(expect.objectContaining({ type: "teammate", name: "alice", state: "shutdown" }));
  });
});
