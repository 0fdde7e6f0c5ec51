import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

const LEAD_TOOLS = [
  "shell",
  "read_file",
  "write_file",
  "edit_file",
  "glob",
  "grep",
  "todo_write",
  "task",
  "load_skill",
  "create_task",
  "get_task",
  "list_tasks",
  "claim_task",
  "complete_task",
  "schedule_cron",
  "spawn_teammate",
  "send_message",
  "read_attachment",
  "request_shutdown",
  "review_plan",
];
const TEAMMATE_TOOLS = ["shell", "read_file", "write_file", "send_message", "respond_shutdown", "read_attachment"];
const BASE_TOOLS = ["shell", "read_file", "write_file", "edit_file", "glob", "grep"];
/** A subagent's: the base tools, and read_attachment for a large tool result its compaction saves. */
const SUBAGENT_TOOLS = [...BASE_TOOLS, "read_attachment"];

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

async function world(
  script: ScriptedReply[],
  options: { maxTurns?: string; prepare?: (workspace: string) => void; stateInWorkspace?: boolean } = {},
) {
  const server = ScriptedModelServer.start(script);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const root = tempDir("agent-lead-tools-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  options.prepare?.(workspace);
  const stateDir = options.stateInWorkspace ? join(workspace, ".agent") : join(root, "state");
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "acceptEdits", ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}) },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  const events: RunEvent[] = [];
  const lead = await buildLead(settings, { stateDir, workspace, observer: (e) => events.push(e) });
  entry.lead = lead;
  return { server, lead, events, workspace };
}

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);
const key = () => uuidV7Source.next();

describe("the Lead's tools", () => {
  test("the Lead has the design's seventeen tools in order; a teammate has exactly its four", async () => {
    const w = await world([
      {
        identity: "lead",
        toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "say hi" } }],
        check: (r) => expect(toolNames(r)).toEqual(LEAD_TOOLS),
      },
      { identity: "lead", text: "spawned" },
      { identity: "alice", text: "hi", check: (r) => expect(toolNames(r)).toEqual(TEAMMATE_TOOLS) },
      { identity: "lead", text: "noted" },
    ]);
    await w.lead.runner.run("go", { idempotencyKey: key() });
    await runUntilQuiet(w.lead);
    w.server.assertDone();
  });

  test("task runs a one-shot subagent with a fresh history and the base tools; only its final text comes back", async () => {
    const w = await world([
      { identity: "lead", toolCalls: [{ id: "t1", name: "task", arguments: { description: "find the config", prompt: "Where is the config?" } }] },
      {
        identity: "lead/task-1",
        check: (r) => {
          expect(toolNames(r)).toEqual(SUBAGENT_TOOLS);
          expect(r.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
          expect(r.body.messages[1]!.content).toBe("Where is the config?");
        },
        toolCalls: [{ name: "glob", arguments: { pattern: "*" } }],
      },
      { identity: "lead/task-1", text: "It is in config.json." },
      {
        identity: "lead",
        text: "The subagent found it.",
        check: (r) => {
          expect(r.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "t1", content: "It is in config.json." });
          // Nothing of the subagent's own turn is in the Lead's history.
          expect(JSON.stringify(r.body.messages.slice(1))).not.toContain("glob");
        },
      },
    ]);
    const result = await w.lead.runner.run("where is the config?", { idempotencyKey: key() });
    expect(result.result).toBe("The subagent found it.");
    w.server.assertDone();
  });

  test("a subagent that hits its turn cap comes back as an error result saying so", async () => {
    const loop = { identity: "lead/task-1", toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] };
    const w = await world(
      [
        { identity: "lead", toolCalls: [{ name: "task", arguments: { description: "loop", prompt: "loop" } }] },
        loop,
        loop,
        {
          identity: "lead",
          text: "it gave up",
          check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("turn cap"),
        },
      ],
      { maxTurns: "2" },
    );
    await w.lead.runner.run("loop", { idempotencyKey: key() });
    w.server.assertDone();
  });

  test("the skills catalog is in the Lead's system prompt and load_skill returns the text", async () => {
    const w = await world(
      [
        {
          identity: "lead",
          check: (r) => expect(String(r.body.messages[0]!.content)).toContain("- sql-review: Review SQL schemas"),
          toolCalls: [{ name: "load_skill", arguments: { name: "sql-review" } }],
        },
        { identity: "lead", text: "loaded", check: (r) => expect(String(r.body.messages.at(-1)!.content)).toContain("Check every table") },
      ],
      {
        prepare: (workspace) => {
          mkdirSync(join(workspace, "skills/sql"), { recursive: true });
          writeFileSync(join(workspace, "skills/sql/SKILL.md"), "---\nname: sql-review\ndescription: Review SQL schemas\n---\nCheck every table.\n");
        },
      },
    );
    await w.lead.runner.run("review", { idempotencyKey: key() });
    w.server.assertDone();
  });

  test("todo_write shows the list as an event; after a few rounds without an update a reminder is added", async () => {
    const todos = [
      { content: "write schema", status: "in_progress" },
      { content: "test it", status: "pending" },
    ];
    const glob = { identity: "lead", toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] };
    const w = await world([
      { identity: "lead", toolCalls: [{ name: "todo_write", arguments: { todos } }] },
      glob,
      glob,
      glob,
      { identity: "lead", text: "done", check: (r) => expect(JSON.stringify(r.body.messages)).toContain("[reminder]") },
    ]);
    await w.lead.runner.run("plan and work", { idempotencyKey: key() });
    expect(w.events.filter((e) => e.type === "todos")).toEqual([{ type: "todos", agent: "lead", todos }]);
    w.server.assertDone();
  });

  test("grep and glob through the Lead skip the state root in the workspace and refuse it when named", async () => {
    const lastResult = (r: RecordedRequest) => String(r.body.messages.at(-1)!.content);
    const w = await world(
      [
        { identity: "lead", toolCalls: [{ name: "grep", arguments: { pattern: "MARKER-7f3a", output_mode: "files_with_matches" } }] },
        {
          identity: "lead",
          // The prompt is in the Lead's history under .agent/ by now; only the workspace file is found.
          check: (r) => expect(lastResult(r)).toBe("notes.md"),
          toolCalls: [{ name: "grep", arguments: { pattern: "MARKER", path: ".agent" } }],
        },
        {
          identity: "lead",
          // Refused by the permission policy (or the tool itself): either names the state directory.
          check: (r) => expect(lastResult(r)).toMatch(/"\.agent".* the agent's state directory/),
          toolCalls: [{ name: "glob", arguments: { pattern: "**/*", include_ignored: true, sort: "name" } }],
        },
        {
          identity: "lead",
          check: (r) => expect(lastResult(r)).toBe("notes.md"),
          toolCalls: [{ name: "glob", arguments: { pattern: ".agent/**/*.jsonl" } }],
        },
        { identity: "lead", text: "done", check: (r) => expect(lastResult(r)).toBe('no files match ".agent/**/*.jsonl" in .') },
      ],
      { stateInWorkspace: true, prepare: (workspace) => writeFileSync(join(workspace, "notes.md"), "MARKER-7f3a\n") },
    );
    await w.lead.runner.run("find MARKER-7f3a", { idempotencyKey: key() });
    w.server.assertDone();
  });
});
