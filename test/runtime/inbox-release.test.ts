import { afterEach, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { systemClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { createMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { buildLead } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import type { TeamEvent } from "../../src/team/teammate-runtime.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// A runtime that closes before the Lead processed a message it claimed (agent run
// --no-wait, a timeout) hands it back to ready/: the mailbox shows it waiting and
// the next runtime delivers it, exactly once.

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function setting(server: ScriptedModelServer, workspace: string) {
  return loadSettings({ flags: { baseUrl: server.url, permissionMode: "plan" }, env: { OPENAI_API_KEY: "sk-test" }, workspace }).settings;
}

test("close releases the Lead's claimed, unprocessed messages to ready/; the next runtime processes them once", async () => {
  const server = ScriptedModelServer.start([{ identity: "lead", text: "got alice's report" }]);
  servers.push(server);
  const root = tempDir("agent-inbox-release-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const stateDir = join(root, "state");
  const store = new FileMailboxStore({ stateDir });
  const sent = createMessage({ sender: "alice", recipient: "lead", kind: "result", content: "report" }, { clock: systemClock, ids: uuidV7Source });
  await store.send(sent);

  const events: TeamEvent[] = [];
  const first = await buildLead(setting(server, workspace), { stateDir, workspace, teamObserver: (e) => events.push(e) });
  // Start-up claimed it for the Lead's inbox …
  expect(first.inbox.size).toBe(1);
  expect((await store.list({ agent: "lead" }))[0]?.counts).toMatchObject({ ready: 0, processing: 1 });
  await first.close();
  // … and close gave it back.
  expect(first.inbox.size).toBe(0);
  expect((await store.list({ agent: "lead" }))[0]?.counts).toMatchObject({ ready: 1, processing: 0, done: 0 });
  expect(events.map((e) => e.type === "mailbox" && e.op)).toEqual(["claim", "release"]);

  const second = await buildLead(setting(server, workspace), { stateDir, workspace });
  try {
    const quiet = await runUntilQuiet(second);
    expect(quiet.events).toBe(1);
    expect(quiet.turns.map((t) => t.result.result)).toEqual(["got alice's report"]);
  } finally {
    await second.close();
  }
  expect((await store.list({ agent: "lead" }))[0]?.counts).toMatchObject({ ready: 0, processing: 0, done: 1 });
  server.assertDone();
});
