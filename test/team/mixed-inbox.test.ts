// Seed requirement: cron and mailbox events share the Lead's one inbox, and each
// is acknowledged by its own owner (the mailbox moves its message to done/, cron
// records the run in cron.json).
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

test("a cron run and a mailbox message in one inbox: both reach the Lead, each acknowledged by its owner", async () => {
  const server = ScriptedModelServer.start([
    { identity: "lead", text: "handled both" },
  ]);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const root = tempDir("agent-mixed-inbox-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const stateDir = join(root, "state");
  mkdirSync(stateDir, { recursive: true });
  const clock = new ManualClock("2026-03-01T12:00:30.000Z");
  // A recurring job whose slot is due, and a message waiting in the Lead's mailbox.
  const jobId = uuidV7Source.next();
  writeFileSync(
    join(stateDir, "cron.json"),
    JSON.stringify({
      version: 1,
      jobs: [{ id: jobId, cron: "* * * * *", prompt: "check the build", recurring: true, durable: true, createdAtUtc: "2026-03-01T11:00:00.000Z", nextRunAtUtc: "2026-03-01T12:00:00.000Z" }],
    }),
  );
  const message = createMessage({ sender: "alice", recipient: "lead", kind: "message", content: "schema is done" }, { clock, ids: uuidV7Source });
  await new FileMailboxStore({ stateDir }).send(message);

  const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode: "bypassPermissions" }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
  const lead = await buildLead(settings, { stateDir, workspace, clock });
  entry.lead = lead;
  const quiet = await runUntilQuiet(lead);

  expect(quiet.events).toBe(2);
  // Both were waiting when the event turn began: one model turn answers them.
  expect(quiet.turns.map((t) => t.events?.map((e) => e.source).sort())).toEqual([["cron", "mailbox"]]);
  // The mailbox's acknowledgement: its message is done.
  expect(readdirSync(join(stateDir, "mailboxes", "lead", "done"))).toEqual([`${message.id}.json`]);
  expect(readdirSync(join(stateDir, "mailboxes", "lead", "processing"))).toEqual([]);
  // Cron's acknowledgement: the run is recorded and the job moved to its next slot.
  const [job] = JSON.parse(readFileSync(join(stateDir, "cron.json"), "utf8")).jobs;
  expect(job).toMatchObject({ id: jobId, lastRunAtUtc: "2026-03-01T12:00:30.000Z", nextRunAtUtc: "2026-03-01T12:01:00.000Z" });
  server.assertDone();
});
