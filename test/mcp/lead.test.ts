import { afterEach, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { type LeadRuntime, buildLead } from "../../src/app/lead.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import { type RecordedRequest, ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { tiny } from "./helpers.ts";

// Which agents of a runtime get which servers' tools: the Lead and `task`
// subagents every server's, teammates only those marked `teammates: true`.

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

async function world(script: ScriptedReply[]) {
  const server = ScriptedModelServer.start(script);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const root = tempDir("agent-mcp-lead-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const { settings } = loadSettings({ flags: { baseUrl: server.url, permissionMode: "bypassPermissions" }, env: { OPENAI_API_KEY: "sk-test" }, workspace });
  settings.mcp.servers = { shared: { ...tiny(), teammates: true }, private: tiny() };
  const events: RunEvent[] = [];
  const lead = await buildLead(settings, { stateDir: join(root, "state"), workspace, observer: (e) => events.push(e) });
  entry.lead = lead;
  return { server, lead, events };
}

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((tool) => tool.function.name);
const servers = (r: RecordedRequest) => [...new Set(toolNames(r).filter((n) => n.startsWith("mcp__")).map((n) => n.split("__")[1]))];
const lastContent = (r: RecordedRequest) => String(r.body.messages.at(-1)!.content);

test("the Lead and a task subagent get every server's tools, a teammate only the shared server's; all after the built-in ones", async () => {
  const w = await world([
    {
      identity: "lead",
      check: (r) => {
        expect(servers(r)).toEqual(["shared", "private"]);
        const names = toolNames(r);
        expect(names.findIndex((n) => n.startsWith("mcp__"))).toBe(names.indexOf("review_plan") + 1);
      },
      toolCalls: [
        { name: "mcp__private__echo", arguments: { text: "lead's call" } },
        { name: "task", arguments: { description: "look", prompt: "use the tools" } },
      ],
    },
    {
      identity: "lead/task-1",
      check: (r) => expect(servers(r)).toEqual(["shared", "private"]),
      toolCalls: [{ name: "mcp__shared__echo", arguments: { text: "subagent's call" } }],
    },
    { identity: "lead/task-1", check: (r) => expect(lastContent(r)).toBe("echo: subagent's call"), text: "found it" },
    {
      identity: "lead",
      check: (r) => {
        const results = r.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        expect(results).toEqual(["echo: lead's call", "found it"]);
      },
      toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "say hi" } }],
    },
    { identity: "lead", text: "spawned" },
    {
      identity: "alice",
      check: (r) => {
        expect(toolNames(r).filter((n) => !n.startsWith("mcp__"))).toEqual(["shell", "read_file", "write_file", "send_message", "respond_shutdown", "read_attachment"]);
        expect(servers(r)).toEqual(["shared"]);
      },
      toolCalls: [{ name: "mcp__private__echo", arguments: { text: "not mine" } }],
    },
    { identity: "alice", check: (r) => expect(lastContent(r)).toContain('unknown tool "mcp__private__echo"'), text: "hi" },
    { identity: "lead", text: "noted" },
  ]);
  await w.lead.runner.run("go", { idempotencyKey: uuidV7Source.next() });
  await runUntilQuiet(w.lead);
  w.server.assertDone();
  expect(w.lead.mcp.statuses().map((s) => [s.name, s.status])).toEqual([
    ["shared", "connected"],
    ["private", "connected"],
  ]);
  await w.lead.close();
  expect(w.lead.mcp.statuses().map((s) => s.status)).toEqual(["closed", "closed"]);
});
