import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { AGENT_BINARY } from "./agent-binary.ts";
import { expectOneLineError, parseResult, scriptedServers } from "./run-fixture.ts";
import { TeamList, teamSetup } from "./team-fixture.ts";
import { deadline } from "../support/deadline.ts";

// The state dir stays owned while `agent run` waits for its team, not only
// during the user turn: a second run or a drain is refused (exit 4), while
// `agent team list`, which needs no lock, shows the team at work.

const startServer = scriptedServers();
const children: Bun.Subprocess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
});

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + deadline(timeoutMs);
  while (!condition()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await Bun.sleep(20);
  }
}

describe("the runtime lock while a run waits for its team", () => {
  test("a second run and a drain exit 4 naming the owner; team list reads the team meanwhile; the first run finishes", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "migrate" } }] },
      { identity: "lead", text: "alice is migrating." },
      // Alice works until the checks below are done.
      { identity: "alice", text: "migrated", gate },
      { identity: "lead", text: "the migration is done." },
    ]);
    const { workspace, stateDir, run, drain, agent } = teamSetup();
    const first = Bun.spawn(
      [AGENT_BINARY, "run", "migrate with a teammate", "--output", "json", "--base-url", server.url, "--workspace", workspace, "--state-dir", stateDir],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
    );
    children.push(first);
    // The user turn is over and alice is working: the run is waiting for its team.
    await until(() => server.requests.some((request) => request.identity === "alice"), 10_000);

    // A new session runs beside it; the same session (-c, or drain finding its
    // pending work) is refused.
    const busy = new RegExp(`state dir .* is busy, owned by pid ${first.pid} on host .*session .* is already running.*--wait-lock`);
    expectOneLineError(await run(["another", "-c", "--base-url", server.url]), 4, busy);
    expectOneLineError(await drain(["--base-url", server.url]), 4, busy);

    const list = await agent("team", "list", "--json");
    expect(list.code).toBe(0);
    expect(TeamList.parse(JSON.parse(list.stdout)).teammates).toMatchObject([{ name: "alice", state: "running", mailbox: { processing: 1 } }]);
    const text = await agent("team", "list");
    // A live owner: "running" is true, no resume hint.
    expect(text.stdout).toMatch(/^alice +backend +running +\S+ +0 +1 +0 +0$/m);

    open();
    const [stdout, code] = await Promise.all([new Response(first.stdout).text(), first.exited]);
    expect(code).toBe(0);
    // Her result and her idle notice, in one turn.
    expect(parseResult(stdout)).toMatchObject({ result: "the migration is done.", events: 2, event_turns: 1 });
    server.assertDone();
  }, 30_000);
});

describe("agent team list", () => {
  test("no team yet: a line on stdout, or an empty list; exit 0 and nothing created", async () => {
    const { agent, stateDir, newSessionDir } = teamSetup();
    expect(await agent("team", "list")).toEqual({ code: 0, stdout: `no teammates: no sessions in ${stateDir}\n`, stderr: "" });
    expect(await agent("team", "list", "--json")).toEqual({ code: 0, stdout: '{"session_id":null,"teammates":[]}\n', stderr: "" });
    expect(existsSync(stateDir)).toBe(false);
    const id = basename(newSessionDir());
    expect(await agent("team", "list")).toEqual({ code: 0, stdout: `no teammates in session ${id}\n`, stderr: "" });
    expect(await agent("team", "list", "--json")).toEqual({ code: 0, stdout: `{"session_id":"${id}","teammates":[]}\n`, stderr: "" });
  });

  test("a corrupt team.json: exit 5, one line naming the file and the fix", async () => {
    const { agent, newSessionDir } = teamSetup();
    await Bun.write(`${newSessionDir()}/team.json`, JSON.stringify({ version: 1, teammates: [{ name: "Alice" }] }));
    for (const args of [["team", "list"], ["team", "list", "--json"]]) {
      const result = await agent(...args);
      expectOneLineError(result, 5, /corrupt state file .*team\.json: teammates\.0\.name: .*; fix or move the file away, then retry/);
      expect(result.stdout).toBe("");
    }
  });
});
