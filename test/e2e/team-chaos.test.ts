import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { FileTeamRegistry, type TeamRegistry } from "../../src/team/team-registry.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { teamBinaries } from "./team-binaries.ts";
import { parseResult, runSetup } from "./run-fixture.ts";
import { eventsIn } from "./team-fixture.ts";

// Chaos: a Lead with --remote-teammates spawns 12 teammates; three `agent
// worker` processes run them, and for 60 s a random one is killed with -9 every
// 2-5 s (a new one started in its place). Each teammate works STEPS steps, each
// a shell command appending its own line to effects.log, then reports. Once the
// killing stops the team drains: every result reaches the Lead exactly once,
// no line of effects.log is there twice (no tool side effect ran twice), and no
// teammate is left pending or running.

const TEAMMATES = 12;
/** With 0.3-1.7 s a model call, a teammate works about as long as the chaos lasts. */
const STEPS = Number(process.env.CHAOS_STEPS ?? 40);
const CHAOS_MS = Number(process.env.CHAOS_MS ?? 60_000);
const SEED = Number(process.env.CHAOS_SEED ?? 44);
const FINAL = "every teammate reported.";

const team = teamBinaries();
const { start } = team;

interface Backend {
  name: string;
  args(): Promise<string[]>;
  registry(sessionDir: string): TeamRegistry;
}

const files: Backend = {
  name: "files (workers sharing the state dir)",
  args: async () => [],
  registry: (sessionDir) => new FileTeamRegistry(sessionDir),
};

function postgres(): Backend {
  let url = "";
  return {
    name: "PostgreSQL",
    async args() {
      url = await team.postgresUrl();
      return ["--store", url];
    },
    registry(sessionDir) {
      return new PgTeamRegistry(team.pool(url, 1), basename(sessionDir));
    },
  };
}

describe.each([files, postgres()])("chaos: 3 workers, 12 teammates, a worker killed every 2-5 s for a minute, store: $name", (backend: Backend) => {
  test("every result exactly once, every side effect at most once, no teammate left pending or running", async () => {
    const random = seededRandom(SEED);
    const { workspace, stateDir, sessionDir } = runSetup();
    const names = Array.from({ length: TEAMMATES }, (_, i) => `t${i + 1}`);
    const workersUp = Promise.withResolvers<void>();
    let spawned = false;
    const duplicates: string[] = [];
    const server = ScriptedModelServer.start([], {
      respond: (request) => {
        const who = request.identity ?? "";
        if (who !== "lead") {
          // Its next step is the number of tool results in its history: a step replayed after a kill asks again.
          const done = request.body.messages.filter((message) => message.role === "tool").length;
          const pause = new Promise((resolve) => setTimeout(resolve, 300 + Math.floor(random() * 1_400)));
          if (done >= STEPS) return { text: `${who} is done`, gate: pause };
          return { toolCalls: [{ name: "shell", arguments: { command: `echo ${who}-${done} >> effects.log` } }], gate: pause };
        }
        if (!spawned) {
          spawned = true;
          return { toolCalls: names.map((name) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt: `work, ${name}` } })), gate: workersUp.promise };
        }
        const results = eventsIn(request).filter((event) => event.kind === "result").map((event) => event.from);
        if (new Set(results).size !== results.length) duplicates.push(results.join(","));
        return { text: new Set(results).size === TEAMMATES ? FINAL : "Noted." };
      },
    });
    team.serve(server);
    const common = ["--session", "chaos", "--permission-mode", "bypassPermissions", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await backend.args())];
    const lead = start(["run", "--remote-teammates", "--output", "json", ...common, "Have every teammate work."]);
    while (server.requests.length === 0) await Bun.sleep(20);
    let workers = [0, 1, 2].map(() => start(["worker", "--quiet", ...common]));
    workersUp.resolve();

    const until = Date.now() + CHAOS_MS;
    let kills = 0;
    while (Date.now() < until && lead.child.exitCode === null) {
      await Bun.sleep(2_000 + Math.floor(random() * 3_000));
      const victim = workers[Math.floor(random() * workers.length)]!;
      victim.child.kill("SIGKILL");
      await victim.child.exited;
      kills += 1;
      workers = [...workers.filter((worker) => worker !== victim), start(["worker", "--quiet", ...common])];
    }

    const deadline = Promise.withResolvers<"still running">();
    const timer = setTimeout(() => deadline.resolve("still running"), 120_000);
    const code = await Promise.race([lead.child.exited, deadline.promise]);
    clearTimeout(timer);
    const registry = backend.registry(sessionDir());
    const left = (await registry.read()).filter((record) => record.state === "running" || record.pendingTaskId !== undefined).map((record) => `${record.name} ${record.state}`);
    expect({ code, left, kills: kills > 0 }).toEqual({ code: 0, left: [], kills: true });
    expect(parseResult(await new Response(lead.child.stdout).text())).toMatchObject({ subtype: "success", result: FINAL });
    expect(duplicates).toEqual([]);
    expect(server.problems).toEqual([]);

    const log = join(workspace, "effects.log");
    const lines = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
    const seen = new Map<string, number>();
    for (const line of lines) seen.set(line, (seen.get(line) ?? 0) + 1);
    expect([...seen].filter(([, count]) => count > 1)).toEqual([]);
    console.log(`${backend.name}: ${kills} kills, ${lines.length} side effects of ${TEAMMATES * STEPS} steps`);
    for (const worker of workers) worker.child.kill("SIGTERM");
    for (const worker of workers) await worker.child.exited;
  }, CHAOS_MS + 240_000);
});
