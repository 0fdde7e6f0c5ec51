// The compiled binary widens Bun's file-work pool before anything makes it (see
// src/storage/fs-pool.ts): a Lead spawning 8 teammates at once, their creates and
// fsyncs queued together, runs them on more pool threads than a small machine's
// cores would give (Bun's own size: one a core). Checked from outside, in /proc, while the Lead's last call
// is held; and with UV_THREADPOOL_SIZE=2 the same run stays on 2 (the user's
// size is kept, and the count is not the test's doing).
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";

beforeAll(() => {
  ensureBinary();
}, 120_000);
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const TEAM = 8;

function poolThreads(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).filter((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").startsWith("Bun Pool");
    } catch {
      return false;
    }
  }).length;
}

/** A run whose Lead spawns TEAM teammates in one reply; its answer to their results is held until `release`. */
async function teamRun(env: Record<string, string | undefined>) {
  const held = Promise.withResolvers<void>();
  const answering = Promise.withResolvers<void>();
  let leadCalls = 0;
  const respond = (request: RecordedRequest): ScriptedReply => {
    if (request.identity !== "lead") return { text: `${request.identity} is done.` };
    leadCalls += 1;
    if (leadCalls === 1) {
      return { toolCalls: Array.from({ length: TEAM }, (_, i) => ({ name: "spawn_teammate", arguments: { name: `w${i}`, role: "worker", prompt: "Say you are done." } })) };
    }
    const results = request.body.messages.filter((message) => message.role === "user" && String(message.content).includes('"kind":"result"')).length;
    if (results < TEAM) return { text: "Waiting for the team." };
    answering.resolve();
    return { text: "The team is done.", gate: held.promise };
  };
  const server = ScriptedModelServer.start([], { respond });
  servers.push(server);
  const setup = runSetup();
  const environment = Object.fromEntries(Object.entries({ ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key", UV_THREADPOOL_SIZE: undefined, ...env }).filter(([, value]) => value !== undefined)) as Record<string, string>;
  // On two CPUs whatever the machine has: the widened pool (8) is then more than the cores give.
  const child = Bun.spawn(["taskset", "-c", "0,1", AGENT_BINARY, "run", "--base-url", server.url, "--model", "m", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "Split the work."], {
    env: environment,
    stdout: "pipe",
    stderr: "pipe",
  });
  await Promise.race([answering.promise, child.exited]);
  const threads = poolThreads(child.pid);
  held.resolve();
  const code = await child.exited;
  return { threads, code, stderr: await new Response(child.stderr).text() };
}

// The run is held to two CPUs (taskset), so the test tells the widened pool apart on a machine of any size.
const CORES = 2;
const linux = requirePrerequisite("Linux (/proc and taskset)", process.platform === "linux" ? (Bun.which("taskset") ? undefined : "taskset (util-linux) is not installed") : `the pool threads are read from /proc, which ${process.platform} has not`);

describe.skipIf(!linux)("agent run's file-work pool", () => {
  test("a team's file work runs on more pool threads than the cores give; with UV_THREADPOOL_SIZE=2 on 2", async () => {
    const widened = await teamRun({});
    expect({ code: widened.code, stderr: widened.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(widened.threads).toBeGreaterThan(CORES);
    expect(widened.threads).toBeLessThanOrEqual(8);
    const chosen = await teamRun({ UV_THREADPOOL_SIZE: "2" });
    expect(chosen.code).toBe(0);
    expect(chosen.threads).toBeLessThanOrEqual(2);
  }, 90_000);
});
