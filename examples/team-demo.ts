// `npm run demo` (after `npm ci`): what agent is for, offline and with no API
// key. The compiled dist/agent runs a Lead that spawns two teammates; they work
// at once and report back through the mailbox, and the Lead answers each report.
// The model is the project's scripted test server (test/support/model-server.ts):
// a stand-in on 127.0.0.1 that gives each agent the next reply of the script
// below, not a real model. Everything else is real: the binary, its files, the
// mailbox. It runs in a fresh temp workspace with a HOME of its own, so it reads
// none of your config and leaves no session key behind.
//
//   bun examples/team-demo.ts        (dist/agent must be built: `npm run demo` builds it)
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ScriptedReply, ScriptedModelServer } from "../test/support/model-server.ts";

const REPO = join(import.meta.dir, "..");
const AGENT = join(REPO, "dist", "agent");
const PROMPT = "Have a teammate write schema.sql with a users table, and another document it in SCHEMA.md.";
export const DEMO_ANSWER = "schema.sql and SCHEMA.md are ready: alice wrote the users table and bob documented it.";
export const DEMO_FILES = {
  "schema.sql": "CREATE TABLE users (\n  id INTEGER PRIMARY KEY,\n  email TEXT NOT NULL UNIQUE\n);\n",
  "SCHEMA.md": "# Schema\n\n`users`: one row per user — `id` (the key) and `email` (unique).\n",
};

const spawn = (name: string, role: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role, prompt } });
const write = (path: keyof typeof DEMO_FILES) => ({ name: "write_file", arguments: { path, content: DEMO_FILES[path] } });

/** What each agent's model calls answer, in order. */
function script(): ScriptedReply[] {
  // bob's work is held until the Lead has taken alice's report, so each report
  // gets an event turn of its own and the script's length is fixed (reports
  // arriving together would share one turn: docs/team.md).
  const aliceAnswered = Promise.withResolvers<void>();
  return [
    { identity: "lead", toolCalls: [spawn("alice", "backend", "Write schema.sql with a users table (id, email)."), spawn("bob", "docs", "Document the users table in SCHEMA.md.")] },
    { identity: "lead", text: "alice is writing schema.sql; bob is documenting it." },
    { identity: "alice", toolCalls: [write("schema.sql")] },
    { identity: "alice", text: "Wrote schema.sql: a users table with id and email." },
    { identity: "bob", toolCalls: [write("SCHEMA.md")], gate: aliceAnswered.promise },
    { identity: "bob", text: "Wrote SCHEMA.md describing the users table." },
    { identity: "lead", text: "Noted: schema.sql is written.", check: () => aliceAnswered.resolve() },
    { identity: "lead", text: DEMO_ANSWER },
  ];
}

/** The environment of the demo's agent: a HOME of its own, and none of the caller's agent or API settings. */
function demoEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(AGENT_|OPENAI_|XDG_)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, HOME: home, OPENAI_API_KEY: "scripted-demo-key" };
}

async function main(): Promise<number> {
  if (!existsSync(AGENT)) {
    console.error("demo: dist/agent is not built: run `npm run demo` (or `npm run build` first)");
    return 1;
  }
  const root = mkdtempSync(join(tmpdir(), "agent-demo-"));
  const workspace = join(root, "workspace");
  const home = join(root, "home");
  mkdirSync(workspace);
  mkdirSync(home);
  const env = demoEnv(home);
  await using server = ScriptedModelServer.start(script());
  const show = (line: string) => console.log(`\n$ ${line}`);

  show(`agent run --permission-mode acceptEdits "${PROMPT}"`);
  console.log(`  (workspace ${workspace}; the model: a scripted server at ${server.url}, no network, no key)`);
  // Spawned, not spawnSync: the scripted server answers from this process's event loop.
  const agent = (args: string[]) => Bun.spawn([AGENT, ...args, "--workspace", workspace], { cwd: workspace, env, stdin: "ignore", stdout: "inherit", stderr: "inherit" }).exited;
  const code = await agent(["run", "--permission-mode", "acceptEdits", "--base-url", server.url, PROMPT]);
  if (code !== 0) {
    console.error(`demo: agent run failed (exit ${code})`);
    return 1;
  }
  show("agent team list");
  await agent(["team", "list"]);
  for (const path of Object.keys(DEMO_FILES)) {
    show(`cat ${path}`);
    process.stdout.write(readFileSync(join(workspace, path), "utf8"));
  }
  // The script used whole, no request unanswered: the demo is also a check.
  server.assertDone();
  console.log(`\ndemo: done; the workspace, with its session in .agent/state/, is kept in ${workspace}`);
  return 0;
}

if (import.meta.main) process.exit(await main());
