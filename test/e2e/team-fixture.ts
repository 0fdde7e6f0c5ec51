import { expect } from "bun:test";
import { z } from "zod";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { type RunOptions, runAgent } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// The seed scenario, scripted per agent (X-Agent-Name): the Lead spawns alice
// (backend) to write schema.sql with a users table and bob (tester) to check it.
// Both start at once; bob waits for alice's word through the mailbox, then
// reads the file. The Lead's last event turn must see both results.

export const SCHEMA_SQL = "CREATE TABLE users (\n  id INTEGER PRIMARY KEY,\n  email TEXT NOT NULL UNIQUE\n);\n";
export const SEED_PROMPT = "Create schema.sql with a users table, and have it checked.";
export const ALICE_RESULT = "Wrote schema.sql: a users table with id and email.";
export const BOB_RESULT = "Checked schema.sql: it creates a users table with id and email.";
export const FINAL_ANSWER = "schema.sql is ready: alice wrote the users table and bob checked it.";

const spawn = (name: string, role: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role, prompt } });

/** The Lead-side envelopes (`agent_event`) in a request: who sent what. */
export function eventsIn(request: RecordedRequest): { from: string; kind: string; content: string }[] {
  return request.body.messages.flatMap((message) => {
    if (message.role !== "user" || typeof message.content !== "string" || !message.content.startsWith('{"agent_event"')) return [];
    const parsed = JSON.parse(message.content) as { agent_event: { from: string; kind: string }; content: string };
    return [{ from: parsed.agent_event.from, kind: parsed.agent_event.kind, content: parsed.content }];
  });
}

export function seedScript(): ScriptedReply[] {
  // Results finishing together would share one event turn (docs/team.md): gates
  // keep them apart here, so each gets its own turn and the count is fixed —
  // alice's result waits for the Lead's first event turn, bob's check (answered to alice, who relays it) for its second.
  const firstEventTurn = Promise.withResolvers<void>();
  const secondEventTurn = Promise.withResolvers<void>();
  return [
    {
      identity: "lead",
      toolCalls: [
        spawn("alice", "backend", "Write schema.sql with a users table (id, email), then tell bob it is written."),
        spawn("bob", "tester", "When alice says schema.sql is written, read it and check that it has a users table."),
      ],
      check: (request) => expect(request.body.messages.at(-1)).toEqual({ role: "user", content: SEED_PROMPT }),
    },
    { identity: "lead", text: "alice is writing schema.sql; bob will check it." },
    { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "schema.sql", content: SCHEMA_SQL } }] },
    { identity: "alice", toolCalls: [{ name: "send_message", arguments: { to: "bob", content: "schema.sql is written" } }] },
    { identity: "alice", text: ALICE_RESULT, gate: firstEventTurn.promise },
    // bob's answer to her message comes back to her, not to the Lead: she relays it.
    {
      identity: "alice",
      text: `bob reports: ${BOB_RESULT}`,
      check: (request) => expect(JSON.parse(String(request.body.messages.at(-1)?.content))).toMatchObject({ agent_event: { from: "bob", kind: "result" }, content: BOB_RESULT }),
    },
    { identity: "bob", text: "Waiting for alice to write schema.sql." },
    {
      identity: "bob",
      toolCalls: [{ name: "read_file", arguments: { path: "schema.sql" } }],
      // Its second turn: the same history, then alice's word.
      check: (request) => {
        const users = request.body.messages.filter((m) => m.role === "user").map((m) => m.content);
        expect(JSON.parse(String(users.at(-1)))).toMatchObject({ agent_event: { from: "alice", kind: "message" }, content: "schema.sql is written" });
        expect(users).toHaveLength(2);
      },
    },
    {
      identity: "bob",
      text: BOB_RESULT,
      gate: secondEventTurn.promise,
      check: (request) => expect(String(request.body.messages.at(-1)?.content)).toContain("CREATE TABLE users"),
    },
    // One event turn per result: bob's first report, bob's check, alice's.
    { identity: "lead", text: "Noted.", check: () => firstEventTurn.resolve() },
    { identity: "lead", text: "Noted.", check: () => secondEventTurn.resolve() },
    {
      identity: "lead",
      text: FINAL_ANSWER,
      check: (request) => {
        const results = eventsIn(request).filter((event) => event.kind === "result");
        expect(results.map((event) => event.from).sort()).toEqual(["alice", "alice", "bob"]);
        expect(results.map((event) => event.content)).toContain(ALICE_RESULT);
        expect(results.map((event) => event.content)).toContain(`bob reports: ${BOB_RESULT}`);
      },
    },
  ];
}

export const Teammate = z.strictObject({
  name: z.string().min(1),
  role: z.string().min(1),
  state: z.enum(["running", "idle", "failed", "shutdown"]),
  failure: z.string().optional(),
});

const Counts = z.strictObject({
  ready: z.number().int().nonnegative(),
  processing: z.number().int().nonnegative(),
  done: z.number().int().nonnegative(),
  quarantine: z.number().int().nonnegative(),
});

/** `agent team list --json`. */
export const TeamList = z.strictObject({
  session_id: z.uuid(),
  teammates: z.array(
    z.strictObject({
      name: z.string().min(1),
      role: z.string().min(1),
      state: z.enum(["running", "idle", "failed", "shutdown"]),
      createdAtUtc: z.iso.datetime(),
      updatedAtUtc: z.iso.datetime(),
      failure: z.string().optional(),
      agent: z.string().optional(),
      model: z.string().optional(),
      plan: z.strictObject({ state: z.enum(["drafting", "submitted", "approved"]), requestId: z.uuid().optional() }).optional(),
      worktree: z.strictObject({ path: z.string(), workspace: z.string(), branch: z.string(), base: z.string() }).optional(),
      autoClaim: z.boolean().optional(),
      owns: z.array(z.string()).optional(),
      mailbox: Counts,
      /** The files it changed in its latest turn that changed any (docs/files.md). */
      files_changed: z.array(z.string()),
    }),
  ),
});

/** `runSetup()` plus `agent drain` and any other command bound to the same workspace and state dir. */
export function teamSetup() {
  const base = runSetup();
  const drain = (args: string[], options: RunOptions = {}) =>
    runAgent(["drain", ...args, "--workspace", base.workspace, "--state-dir", base.stateDir], {
      ...options,
      env: { OPENAI_API_KEY: "test-key", ...options.env },
    });
  const agent = (...args: string[]) => runAgent([...args, "--state-dir", base.stateDir]);
  return { ...base, drain, agent };
}
