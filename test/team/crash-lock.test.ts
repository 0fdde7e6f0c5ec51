// The runtime lock between two real `agent run` processes on one state dir: the
// second is refused while the first runs, and the first is not disturbed.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "../e2e/agent-binary.ts";
import { expectOneLineError, runSetup } from "../e2e/run-fixture.ts";
import { until } from "../fixtures/team-children.ts";

const servers: ScriptedModelServer[] = [];
const processes: Bun.Subprocess[] = [];
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  for (const child of processes.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const server of servers.splice(0)) await server.close();
});

describe("the runtime lock", () => {
  test("a second `agent run` on a state dir while one runs: exit 4 naming the running pid, no model call", async () => {
    const server = ScriptedModelServer.start([{ identity: "lead", delayMs: 1_500, text: "first done" }]);
    servers.push(server);
    const { workspace, stateDir, run } = runSetup();
    const first = Bun.spawn(
      [AGENT_BINARY, "run", "first", "--base-url", server.url, "--workspace", workspace, "--state-dir", stateDir, "--quiet"],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
    );
    processes.push(first);
    // The first holds the lock by the time it asks the model.
    expect(await until(() => server.requests.length === 1, 10_000)).toBe(true);

    const second = await run(["second", "--base-url", server.url]);
    expectOneLineError(second, 4, new RegExp(`is busy, owned by pid ${first.pid} on host `));
    expect(second.stdout).toBe("");
    expect(server.requests).toHaveLength(1);

    const [stdout, code] = await Promise.all([new Response(first.stdout).text(), first.exited]);
    expect({ code, stdout }).toEqual({ code: 0, stdout: "first done\n" });
    server.assertDone();
  }, 30_000);
});
