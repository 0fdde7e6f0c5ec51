// Requirements of the original design the code met without a test to prove it.
import { afterEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { SequentialIds, uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { assertShared, buildLead, type LeadContext, type LeadRuntime } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import type { FsOps } from "../../src/storage/fs-ops.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

async function world(script: ScriptedReply[], extra: Partial<LeadContext> = {}, hooksLog?: string) {
  const server = ScriptedModelServer.start(script);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const root = tempDir("agent-seed-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  writeFileSync(join(workspace, "notes.md"), "notes\n");
  const stateDir = join(root, "state");
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  if (hooksLog) settings.hooks = { PreToolUse: [{ command: `cat >> '${hooksLog}'; echo >> '${hooksLog}'` }] };
  const lead = await buildLead(settings, { stateDir, workspace, ...extra });
  entry.lead = lead;
  return { server, lead, stateDir, workspace };
}

const spawn = (name: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role: "worker", prompt } });

/** The real fs whose renames from `from` to `to` (path fragments) fail while `failing.on` is set. */
function switchableRenames(from: string, to: string) {
  const failing = { on: true, failed: 0 };
  const ops: FsOps = {
    ...fs,
    renameSync: (source: fs.PathLike, target: fs.PathLike) => {
      if (failing.on && String(source).includes(from) && String(target).includes(to)) {
        failing.failed += 1;
        throw Object.assign(new Error(`EIO: i/o error, rename '${source}'`), { code: "EIO", syscall: "rename" });
      }
      fs.renameSync(source, target);
    },
  };
  return { ops, failing };
}

describe("seed requirements", () => {
  test("every tool call gets its turn's message id as idempotency key: a teammate's, its input message's; the Lead's, its prompt's", async () => {
    const log = join(tempDir("agent-seed-log-"), "pre-tool-use.jsonl");
    const w = await world(
      [
        { identity: "lead", toolCalls: [spawn("alice", "read notes.md")] },
        { identity: "lead", text: "spawned" },
        { identity: "alice", toolCalls: [{ name: "read_file", arguments: { path: "notes.md" } }] },
        { identity: "alice", text: "read it" },
        { identity: "lead", text: "noted" },
      ],
      {},
      log,
    );
    const userKey = uuidV7Source.next();
    await w.lead.runner.run("get notes read", { idempotencyKey: userKey });
    await runUntilQuiet(w.lead);
    const calls = readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
    const [task] = readdirSync(join(w.stateDir, "mailboxes", "alice", "done"));
    expect(calls.map((c) => [c.identity, c.tool, c.idempotencyKey])).toEqual([
      ["lead", "spawn_teammate", userKey],
      ["alice", "read_file", task!.replace(/\.json$/, "")],
    ]);
    w.server.assertDone();
  });

  test("the clock and the id source come through the Lead's context: messages carry them", async () => {
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const ids = new SequentialIds("00000000-0000-4000-8000");
    const asked = Promise.withResolvers<void>();
    const w = await world(
      [
        { identity: "lead", toolCalls: [spawn("alice", "wait")] },
        { identity: "lead", text: "spawned" },
        { identity: "alice", check: () => asked.resolve(), gate: new Promise(() => {}), text: "never" },
      ],
      { clock, ids },
    );
    await w.lead.runner.run("start", { idempotencyKey: uuidV7Source.next() });
    await asked.promise;
    const [file] = readdirSync(join(w.stateDir, "mailboxes", "alice", "processing"));
    const task = JSON.parse(readFileSync(join(w.stateDir, "mailboxes", "alice", "processing", file!), "utf8"));
    expect(task).toMatchObject({ id: "00000000-0000-4000-8000-000000000001", createdAtUtc: "2026-03-01T12:00:00.000Z" });
  });

  test("the guard against a second inbox or supervisor fires", () => {
    const inbox = new EventInbox();
    const supervisor = new JobSupervisor(() => {});
    const other = new EventInbox();
    class Cron {
      constructor(
        readonly inbox: EventInbox,
        readonly supervisor: JobSupervisor,
      ) {}
    }
    expect(() => assertShared([new Cron(inbox, supervisor)], inbox, supervisor)).not.toThrow();
    expect(() => assertShared([new Cron(other, supervisor)], inbox, supervisor)).toThrow(/Cron must share the runtime's one EventInbox/);
    expect(() => assertShared([new Cron(inbox, new JobSupervisor(() => {}))], inbox, supervisor)).toThrow(/one EventInbox and JobSupervisor/);
  });

  test("TeammateRuntime.close() with several failures throws one AggregateError, keeps what failed, and a retry finishes it", async () => {
    const releases = switchableRenames("/processing/", "/ready/");
    const asked = { alice: Promise.withResolvers<void>(), bob: Promise.withResolvers<void>() };
    const never = new Promise(() => {});
    const w = await world(
      [
        { identity: "lead", toolCalls: [spawn("alice", "long a"), spawn("bob", "long b")] },
        { identity: "lead", text: "spawned" },
        { identity: "alice", check: () => asked.alice.resolve(), gate: never, text: "never" },
        { identity: "bob", check: () => asked.bob.resolve(), gate: never, text: "never" },
      ],
      { mailboxFs: releases.ops },
    );
    await w.lead.runner.run("start both", { idempotencyKey: uuidV7Source.next() });
    await Promise.all([asked.alice.promise, asked.bob.promise]);

    const error = await w.lead.team.close().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors).toHaveLength(2);
    expect(w.lead.team.list().map((t) => t.state)).toEqual(["running", "running"]);
    for (const name of ["alice", "bob"]) expect(readdirSync(join(w.stateDir, "mailboxes", name, "processing"))).toHaveLength(1);

    releases.failing.on = false;
    await w.lead.team.close();
    expect(w.lead.team.list().map((t) => t.state)).toEqual(["shutdown", "shutdown"]);
    for (const name of ["alice", "bob"]) expect(readdirSync(join(w.stateDir, "mailboxes", name, "ready"))).toHaveLength(1);
  });

  test("recover with a failing rename leaves the message where it was; a later recover moves it", async () => {
    const stateDir = tempDir("agent-seed-recover-");
    const renames = switchableRenames("/alice/processing/", "/alice/ready/");
    renames.failing.on = false;
    const store = new FileMailboxStore({ stateDir, fs: renames.ops });
    const message = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock: new ManualClock("2026-03-01T12:00:00.000Z"), ids: uuidV7Source });
    await store.send(message);
    await store.claim("alice");
    renames.failing.on = true;
    await expect(store.recover("alice")).rejects.toThrow(/the message stays in processing\//);
    expect(readdirSync(join(stateDir, "mailboxes", "alice", "processing"))).toEqual([`${message.id}.json`]);
    expect(readdirSync(join(stateDir, "mailboxes", "alice", "ready"))).toEqual([]);
    renames.failing.on = false;
    expect((await store.recover("alice")).recovered).toEqual([{ agent: "alice", id: message.id }]);
    expect(readdirSync(join(stateDir, "mailboxes", "alice", "ready"))).toEqual([`${message.id}.json`]);
  });
});

describe("start-up that fails half way", () => {
  test("closes what it built: the Lead's message the restore had claimed goes back to ready/, and the next start works", async () => {
    const server = ScriptedModelServer.start([]);
    open.push({ server });
    const root = tempDir("agent-seed-startup-");
    const workspace = join(root, "ws");
    mkdirSync(workspace);
    const stateDir = join(root, "state");
    const waiting = createMessage({ sender: "alice", recipient: "lead", kind: "message", content: "for the Lead" }, { clock: new ManualClock("2026-03-01T12:00:00.000Z"), ids: uuidV7Source });
    await new FileMailboxStore({ stateDir }).send(waiting);
    // Read when cron starts, after the team's restore has claimed the Lead's mail.
    writeFileSync(join(stateDir, "cron.json"), "{ not json");
    const { settings } = loadSettings({ flags: { baseUrl: server.url }, env: { OPENAI_API_KEY: "sk-test" }, workspace });

    await expect(buildLead(settings, { stateDir, workspace })).rejects.toThrow(/cron\.json/);
    expect(readdirSync(join(stateDir, "mailboxes", "lead", "processing"))).toEqual([]);
    expect(readdirSync(join(stateDir, "mailboxes", "lead", "ready"))).toEqual([`${waiting.id}.json`]);

    writeFileSync(join(stateDir, "cron.json"), JSON.stringify({ version: 1, jobs: [] }));
    const lead = await buildLead(settings, { stateDir, workspace });
    open.push({ server, lead });
    expect(lead.inbox.size).toBe(1);
  });
});
