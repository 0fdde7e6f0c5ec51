// The seed team scenario on the compiled binary with `--store postgres://…`: the
// Lead and its teammates exchange every message through the PostgreSQL mailbox
// of a real throw-away cluster, and none through files.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SQL } from "bun";
import { ensureBinary } from "./agent-binary.ts";
import { scriptedServers } from "./run-fixture.ts";
import { FINAL_ANSWER, SCHEMA_SQL, SEED_PROMPT, seedScript, teamSetup } from "./team-fixture.ts";
import { clusterForFile } from "../support/postgres.ts";

const startServer = scriptedServers();
const pg = clusterForFile(ensureBinary);

async function rowsOf(url: string, session: string) {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows: { agent: string; state: string; sender: string; kind: string }[] =
      await sql`SELECT agent, state, sender, kind FROM agent_messages WHERE session = ${session} ORDER BY agent, created_at_utc, id`;
    return rows.map((row) => ({ ...row }));
  } finally {
    await sql.close();
  }
}

/** Whose history rows the session has, and its teammates' rows. */
async function stateOf(url: string, session: string) {
  const sql = new SQL(url, { max: 1 });
  try {
    const histories: { agent: string }[] = await sql`SELECT DISTINCT agent FROM agent_history WHERE session = ${session} ORDER BY agent`;
    const teammates: { name: string }[] = await sql`SELECT name FROM agent_teammates WHERE session = ${session} ORDER BY name`;
    return { histories: histories.map((row) => row.agent), teammates: teammates.map((row) => row.name) };
  } finally {
    await sql.close();
  }
}

describe("agent run --store postgres://…", () => {
  test("the team works through the PostgreSQL mailbox: every message done there, no mailbox files", async () => {
    const server = startServer(seedScript());
    const { run, workspace, sessionDir, agent } = teamSetup();
    const url = (await pg().database()).replace("postgres://agent@", "postgres://agent:pg-secret-42@");
    const result = await run([SEED_PROMPT, "--base-url", server.url, "--permission-mode", "acceptEdits", "--store", url, "--verbose"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `${FINAL_ANSWER}\n` });
    server.assertDone();
    expect(readFileSync(join(workspace, "schema.sql"), "utf8")).toBe(SCHEMA_SQL);
    expect(result.stderr).not.toContain("pg-secret-42");

    const dir = sessionDir();
    // Mailboxes, histories and the team are all in the store; the session's dir keeps none of them.
    for (const kept of ["mailboxes", "agents", "team.json", "tasks", "cron.json"]) expect(existsSync(join(dir, kept))).toBe(false);
    expect(await stateOf(url, basename(dir))).toEqual({
      histories: ["alice", "bob", "lead"],
      teammates: ["alice", "bob"],
    });
    const rows = await rowsOf(url, basename(dir));
    expect(rows.filter((row) => row.state !== "done")).toEqual([]);
    // alice's task and bob's answer to her word; bob's task and alice's word; alice's two results and bob's task's.
    const work = rows.filter((row) => row.kind !== "idle");
    expect(work.map((row) => `${row.agent} <- ${row.sender} (${row.kind})`).sort()).toEqual([
      "alice <- bob (result)",
      "alice <- lead (task)",
      "bob <- alice (message)",
      "bob <- lead (task)",
      "lead <- alice (result)",
      "lead <- alice (result)",
      "lead <- bob (result)",
    ]);
    // An idle notice each time one ran out of work: alice twice (her task, her relay of bob's answer);
    // bob once or twice (alice's word may reach him before he first runs out).
    const idle = rows.filter((row) => row.kind === "idle").map((row) => `${row.agent} <- ${row.sender}`);
    expect(idle.filter((row) => row === "lead <- alice")).toHaveLength(2);
    expect([1, 2]).toContain(idle.filter((row) => row === "lead <- bob").length);
    expect(idle).toHaveLength(rows.length - work.length);
    // The operator's view is the same store's.
    const listed = await agent("mailbox", "list", "--json", "--store", url);
    expect(listed.code).toBe(0);
    const counts = Object.fromEntries(
      (JSON.parse(listed.stdout).agents as { name: string; counts: { done: number } }[]).map((a) => [a.name, a.counts.done]),
    );
    expect(counts).toEqual({ alice: 2, bob: 2, lead: 3 + idle.length });
    const onFiles = await agent("mailbox", "list", "--json");
    expect(JSON.parse(onFiles.stdout).agents).toEqual([]);
    const sent = await agent("mailbox", "send", "--to", "lead", "--from", "ops", "--content", "status?", "--store", url);
    expect(sent.code).toBe(0);
    const shown = await agent("mailbox", "show", sent.stdout.trim(), "--json", "--store", url);
    expect(JSON.parse(shown.stdout)).toMatchObject({ agent: "lead", state: "ready", message: { sender: "ops", content: "status?" } });
    expect(listed.stdout + sent.stdout + shown.stdout + sent.stderr).not.toContain("pg-secret-42");
    const list = await agent("team", "list", "--store", url);
    expect(list.stdout).toMatch(/alice +\S+ +idle/);
    expect(list.stdout).not.toContain("pg-secret-42");
    // A command that changes a stopped session's team works on the store's rows, with the same checks.
    const refused = await agent("team", "reset", "alice", "--store", url);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 2,
      stderr: "agent: teammate alice is idle, not failed; only a failed teammate can be reset\n",
    });
  });

  test("--no-wait leaves alice's result ready in PostgreSQL; agent drain --store answers it once", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "count the tables" } }] },
      // A slow model: alice reports while the user turn is still going; the run must not take it in.
      { identity: "lead", text: "alice is counting.", delayMs: 1_500 },
      { identity: "alice", text: "there are 3 tables" },
    ]);
    const { run, drain, agent } = teamSetup();
    const url = await pg().database();
    const result = await run(["count the tables with a teammate", "--no-wait", "--output", "json", "--base-url", server.url, "--store", url]);
    expect(result.code).toBe(0);
    const sessionId = JSON.parse(result.stdout).session_id as string;
    server.assertDone();
    const leadCounts = async () => {
      const listed = await agent("mailbox", "list", "--agent", "lead", "--json", "--store", url, "--session", sessionId);
      return JSON.parse(listed.stdout).agents[0].counts;
    };
    // Her result and her idle notice.
    expect(await leadCounts()).toEqual({ ready: 2, processing: 0, done: 0, quarantine: 0 });

    server.push({ identity: "lead", text: "alice says there are 3 tables." });
    const drained = await drain(["--output", "json", "--base-url", server.url, "--session", sessionId], { env: { AGENT_STORE: url } });
    expect(drained.code).toBe(0);
    expect(JSON.parse(drained.stdout)).toMatchObject({ subtype: "success", result: "alice says there are 3 tables.", events: 2 });
    server.assertDone();
    expect(await leadCounts()).toEqual({ ready: 0, processing: 0, done: 2, quarantine: 0 });
  });

  test("an unreachable store stops the run before any model call: exit 5, one line, no password", async () => {
    const server = startServer([]);
    const { run } = teamSetup();
    const result = await run(["hello", "--base-url", server.url, "--store", `postgres://agent:pw-abc123@127.0.0.1:${pg().port + 1}/x`]);
    expect(result.code).toBe(5);
    expect(result.stderr).toMatch(/^agent: cannot use the PostgreSQL store postgres:\/\/agent:\[REDACTED\]@127\.0\.0\.1:\d+\/x: .*\n$/);
    expect(result.stdout + result.stderr).not.toContain("pw-abc123");
    server.assertDone();
  });
});
