import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { parseResult, parseStream, scriptedServers } from "./run-fixture.ts";
import { ALICE_RESULT, BOB_RESULT, FINAL_ANSWER, SCHEMA_SQL, SEED_PROMPT, TeamList, seedScript, teamSetup } from "./team-fixture.ts";

// The seed scenario on the compiled binary: `agent run` spawns alice and bob,
// waits for the team, runs an event turn per result, and answers with what
// they reported. The scripted server checks the Lead's last request holds both
// results; the files, `team list` and every output format are checked here.

const startServer = scriptedServers();
const seedArgs = (url: string) => [SEED_PROMPT, "--base-url", url, "--permission-mode", "acceptEdits"];

describe("agent run waits for its team", () => {
  test("text: the final answer reflects both results; schema.sql written; teammates idle; team list", async () => {
    const server = startServer(seedScript());
    const { run, agent, workspace, sessionDir } = teamSetup();
    const result = await run(seedArgs(server.url));
    const stateDir = sessionDir();
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `${FINAL_ANSWER}\n` });
    server.assertDone();
    expect(readFileSync(join(workspace, "schema.sql"), "utf8")).toBe(SCHEMA_SQL);
    // Teammates' state changes and the Lead's event turns, in progress on stderr.
    for (const line of ["[alice] running (backend)", "[alice] idle (backend)", "[bob] running (tester)", "[bob] idle (tester)"]) {
      expect(result.stderr).toContain(`${line}\n`);
    }
    // One per result; idle notices ride along ("; alice and bob are idle").
    expect(result.stderr.match(/^\[lead\] event turn: result from (alice|bob)(; .* idle)?$/gm)).toHaveLength(3);
    expect(result.stderr).toMatch(/^\[lead\] event turn: .*\balice\b.* idle$/m);
    // Each agent its own history; every result reached the Lead once.
    const lead = readFileSync(join(stateDir, "agents", "lead.jsonl"), "utf8");
    for (const text of [ALICE_RESULT, BOB_RESULT]) expect(lead.split(JSON.stringify(text).slice(1, -1)).length - 1).toBe(1);
    expect(readFileSync(join(stateDir, "agents", "bob.jsonl"), "utf8")).toContain("CREATE TABLE users");

    const list = await agent("team", "list");
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: "" });
    const [session, ...lines] = list.stdout.trimEnd().split("\n");
    expect(session).toBe(`session ${basename(stateDir)}`);
    expect(lines[0]).toMatch(/^NAME +ROLE +STATE +UPDATED \(UTC\) +READY +PROCESSING +DONE +QUARANTINE +NOTE$/);
    expect(lines.slice(1).map((line) => line.split(/ +/).slice(0, 3))).toEqual([
      ["alice", "backend", "idle"],
      ["bob", "tester", "idle"],
    ]);

    const json = await agent("team", "list", "--json");
    expect(json.code).toBe(0);
    const teammates = TeamList.parse(JSON.parse(json.stdout)).teammates;
    expect(teammates.map(({ name, role, state, mailbox }) => ({ name, role, state, mailbox }))).toEqual([
      // Its task, then bob's answer to her word.
      { name: "alice", role: "backend", state: "idle", mailbox: { ready: 0, processing: 0, done: 2, quarantine: 0 } },
      // Its task, then alice's word.
      { name: "bob", role: "tester", state: "idle", mailbox: { ready: 0, processing: 0, done: 2, quarantine: 0 } },
    ]);
  });

  test("--output json: the result with teammates and the events processed", async () => {
    const server = startServer(seedScript());
    const { run } = teamSetup();
    const result = await run([...seedArgs(server.url), "--output", "json"]);
    expect(result.code).toBe(0);
    const json = parseResult(result.stdout);
    expect(json).toMatchObject({
      subtype: "success",
      is_error: false,
      result: FINAL_ANSWER,
      // The Lead's model calls: two in the user turn, one per event turn.
      turns: 5,
      event_turns: 3,
      teammates: [
        { name: "alice", role: "backend", state: "idle" },
        { name: "bob", role: "tester", state: "idle" },
      ],
    });
    // Three results and an idle notice each time a teammate ran out of work: alice once,
    // bob once or twice (alice's word may reach him before he first runs out).
    expect([6, 7]).toContain(json.events as number);
    server.assertDone();
  });

  test("--output stream-json: teammate states, mailbox moves and event turns, each line validated", async () => {
    const server = startServer(seedScript());
    const { run } = teamSetup();
    const result = await run([...seedArgs(server.url), "--output", "stream-json", "--quiet"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = parseStream(result.stdout);
    server.assertDone();
    const states = lines.flatMap((l) => (l.type === "teammate" ? [`${l.name}:${l.state}`] : []));
    for (const state of ["alice:running", "alice:idle", "bob:running", "bob:idle", "alice:shutdown", "bob:shutdown"]) expect(states).toContain(state);
    expect(lines).toContainEqual(expect.objectContaining({ type: "teammate", name: "alice", role: "backend", state: "running" }));

    // Each result: sent to the Lead, claimed, in the history (event), acked, then its model turn.
    const events = lines.flatMap((l, i) => (l.type === "event" && l.kind === "result" ? [{ line: l, i }] : []));
    expect(events.map(({ line }) => line.sender).sort()).toEqual(["alice", "alice", "bob"]);
    for (const { line, i } of events) {
      const at = (op: string) => lines.findIndex((l) => l.type === "mailbox" && l.op === op && l.id === line.event_id);
      expect(lines[at("send")]).toEqual({ type: "mailbox", op: "send", agent: "lead", id: line.event_id, from: line.sender, kind: "result" });
      expect(at("send")).toBeLessThan(at("claim"));
      expect(at("claim")).toBeLessThan(i);
      expect(i).toBeLessThan(at("ack"));
      expect(lines.slice(at("ack")).find((l) => l.type === "model_request" && l.agent === "lead")).toBeDefined();
    }
    // The user turn ended (its answer) before the first event reached the Lead.
    const userAnswer = lines.findIndex((l) => l.type === "assistant" && l.agent === "lead");
    expect(userAnswer).toBeLessThan(events[0]!.i);
    expect(lines.at(-1)).toMatchObject({ type: "result", result: FINAL_ANSWER, event_turns: 3 });
    const idle = lines.flatMap((l) => (l.type === "event" && l.kind === "idle" ? [l.sender] : []));
    expect(new Set(idle)).toEqual(new Set(["alice", "bob"]));
  });
});
