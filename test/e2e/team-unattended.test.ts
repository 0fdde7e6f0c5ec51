// A Lead with --remote-teammates and no worker running, on the compiled binary
// with a PostgreSQL store: once alice's task has waited a few seconds with no
// worker holding her lease, the Lead says so — one stderr line naming the
// command that starts a worker (the URL's password masked), and one `warning`
// line in stream-json — and the command it names, run as printed, finishes the run.
import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { ScriptedModelServer } from "../support/model-server.ts";
import { clusterForFile } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

const pg = clusterForFile(ensureBinary);
const children: Subprocess<"ignore", "pipe", "pipe">[] = [];
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const server of servers.splice(0)) await server.close();
});

/** Starts the binary; `stderr()` is what it printed there so far. */
function start(args: string[]) {
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  let text = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stderr) text += decoder.decode(chunk, { stream: true });
  })();
  return { child, stderr: () => text, stderrDone: reading.then(() => text) };
}

const WARNING = /teammate alice has had work for (\d+) s but no worker holds it \(this run has --remote-teammates\); start one: `agent worker --session ([0-9a-f-]{36}) --store ([^`]+)`/;

describe("agent run --remote-teammates with no worker", () => {
  test("says once that alice's work waits for a worker, with the command that starts one; that command finishes the run", async () => {
    const url = (await pg().database()).replace("postgres://agent@", "postgres://agent:pg-secret-5@");
    const { workspace, stateDir } = runSetup();
    const server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "count the tables" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "there are 2 tables" },
      { identity: "lead", text: "alice counted 2 tables." },
    ]);
    servers.push(server);
    const common = ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--store", url];
    const lead = start(["run", "--remote-teammates", "--output", "stream-json", "--timeout", "60s", ...common, "Have alice count the tables."]);
    for (let waited = 0; !WARNING.test(lead.stderr()) && waited < 30_000; waited += 50) await Bun.sleep(50);
    const [line, seconds, sessionId, shownStore] = lead.stderr().match(WARNING) ?? [];
    expect(line).toBeDefined();
    expect(Number(seconds)).toBeGreaterThanOrEqual(5);
    expect(shownStore).toBe(url.replace("pg-secret-5", "[REDACTED]"));

    // The command as printed (with the real URL in place of the masked one).
    const worker = start(["worker", "--session", sessionId!, "--store", url, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url]);
    expect(await lead.child.exited).toBe(0);
    const stdout = await new Response(lead.child.stdout).text();
    const stderr = await lead.stderrDone;
    const lines = stdout.trimEnd().split("\n").map((text) => JSON.parse(text));
    expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "alice counted 2 tables." });
    // One line per teammate, not one per look.
    expect(stderr.split("\n").filter((text) => WARNING.test(text))).toEqual([`[lead] warning: ${line}`]);
    expect(lines.filter((event) => event.type === "warning")).toEqual([{ type: "warning", agent: "lead", message: line }]);
    expect(stdout + stderr).not.toContain("pg-secret-5");
    worker.child.kill("SIGTERM");
    expect(await worker.child.exited).toBe(0);
    server.assertDone();
  }, 90_000);
});
