import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { waitUntil } from "../support/deadline.ts";

// Unsandboxed (danger-full-access) commands die with the run that started them,
// however it ends: their own process group, a death signal on the direct child,
// and a watchdog that kills the groups when the agent's end of its pipe closes.

const servers: ScriptedModelServer[] = [];
const pids: number[] = [];
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  // Whatever a failing test left running.
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** Alive and not a zombie (a killed process stays a zombie until something reaps it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Which of `pids` (named by `names`) are alive, each with its process group and state: what a timeout says. */
function describeAlive(names: string[], pids: number[]): string {
  const left = pids.flatMap((pid, i) => {
    if (!alive(pid)) return [];
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return [`${names[i]} ${pid} (state ${fields[0]}, parent ${fields[1]}, group ${fields[2]})`];
  });
  return left.length > 0 ? left.join(", ") : "none";
}

/** Waits for `ok` (the deadline scaled to the machine's load: test/support/deadline.ts); how long it took. */
async function waitFor(what: string | (() => string), ok: () => boolean, ms: number): Promise<number> {
  const started = performance.now();
  await waitUntil(ok, what, ms);
  return performance.now() - started;
}

function pidsIn(workspace: string, names: string[]): number[] {
  const found = names.map((name) => Number(readFileSync(join(workspace, name), "utf8").trim()));
  pids.push(...found);
  return found;
}

const AGENT_ENV = { OPENAI_API_KEY: "test-key-0123456789", AGENT_STATE_DIR: undefined, NO_COLOR: "1" };

function agentEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...process.env, ...AGENT_ENV }).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

describe.skipIf(process.platform !== "linux")("children of an unsandboxed run", () => {
  test.each(["SIGKILL", "SIGTERM", "SIGINT"] as const)("%s to `agent run`: a running shell command, what it put in the background, and a background job are gone soon after", async (signal) => {
    const workspace = realpathSync(tempDir("agent-children-"));
    const server = ScriptedModelServer.start([
      { toolCalls: [{ name: "shell", arguments: { command: "echo $$ > job.pid; exec sleep 300", run_in_background: true } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "sleep 300 & echo $! > bg.pid; echo $$ > fg.pid; exec sleep 300" } }] },
      { text: "never reached" },
    ]);
    servers.push(server);
    const agent = Bun.spawn([AGENT_BINARY, "run", "--base-url", server.url, "--workspace", workspace, "--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access", "go"], {
      cwd: workspace,
      env: agentEnv(),
      stdout: "ignore",
      stderr: "ignore",
    });
    pids.push(agent.pid);
    const names = ["job.pid", "bg.pid", "fg.pid"];
    await waitFor("the commands to start", () => names.every((name) => existsSync(join(workspace, name)) && readFileSync(join(workspace, name), "utf8").endsWith("\n")), 30_000);
    const children = pidsIn(workspace, names);
    for (const pid of children) expect(alive(pid)).toBe(true);
    agent.kill(signal);
    await agent.exited;
    // Typically 0-21 ms (printed); the bound only says they die, with room for a loaded
    // machine: a full suite on 2 cores once took more than 2 s.
    const took = await waitFor(
      () => `every child to die; alive: ${describeAlive(names, children)}`,
      () => children.every((pid) => !alive(pid)),
      15_000,
    );
    console.log(`children of a run ended by ${signal} gone ${took.toFixed(0)} ms after it exited`);
  });

  test("a normal end: what a command left running in the background is ended with the run", async () => {
    const workspace = realpathSync(tempDir("agent-children-"));
    const server = ScriptedModelServer.start([{ toolCalls: [{ name: "shell", arguments: { command: "sleep 300 & echo $! > left.pid" } }] }, { text: "done" }]);
    servers.push(server);
    const run = await runAgent(["run", "--base-url", server.url, "--workspace", workspace, "--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access", "go"], {
      cwd: workspace,
      env: AGENT_ENV,
    });
    expect(run.code).toBe(0);
    const [left] = pidsIn(workspace, ["left.pid"]);
    await waitFor("the left-behind child to die", () => !alive(left!), 2_000);
  });
});
