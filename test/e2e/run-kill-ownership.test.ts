import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModelServer } from "../support/model-server.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// `agent run` killed with -9 at random moments of its first second, then `agent
// drain` without --wait-lock: the session is never refused as busy (the runtime's
// flock dies with it), and a session that shows a first prompt has that prompt in
// the Lead's history (it is recorded once the user turn is).

beforeAll(() => {
  ensureBinary();
}, 120_000);
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});

const RUNS = 100;
const LOOPS = 4;

function sessionFiles(stateDir: string): { prompt: string | undefined; history: string } | undefined {
  const sessions = join(stateDir, "sessions");
  if (!existsSync(sessions)) return undefined;
  const [id] = readdirSync(sessions);
  if (id === undefined || !existsSync(join(sessions, id, "session.json"))) return undefined;
  const meta = JSON.parse(readFileSync(join(sessions, id, "session.json"), "utf8")) as { firstPrompt?: string };
  const historyPath = join(sessions, id, "agents", "lead.jsonl");
  return { prompt: meta.firstPrompt, history: existsSync(historyPath) ? readFileSync(historyPath, "utf8") : "" };
}

/** Half the kills land where start-up takes the lock and writes the session (30–200 ms), half anywhere in the first second. */
const killDelay = (i: number) => (i % 2 === 0 ? 30 + Math.random() * 170 : Math.random() * 1_000);

/**
 * `runs` kills spread over `loops` parallel loops, each a fresh state root: kill -9
 * at a random moment, then `agent drain` without --wait-lock. `store` gives the
 * --store arguments of each run (none for files); with files the Lead's history is
 * on disk, and a first prompt in session.json must be in it.
 */
async function killThenDrain(runs: number, loops: number, store: () => Promise<string[]>): Promise<string[]> {
  // Every request gets an answer, a little late: a run is killed while it waits, or after it finished.
  const answering = ScriptedModelServer.start([], { respond: () => ({ text: "done", delayMs: 100 }) });
  const failures: string[] = [];
  const loop = async (loopIndex: number) => {
    for (let i = loopIndex; i < runs; i += loops) {
      const { workspace, stateDir } = runSetup();
      const storeArgs = await store();
      const prompt = `write notes ${i}`;
      const env = { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" } as Record<string, string>;
      const child = Bun.spawn([AGENT_BINARY, "run", prompt, "--workspace", workspace, "--state-dir", stateDir, "--base-url", answering.url, ...storeArgs], {
        env,
        stdio: ["ignore", "ignore", "ignore"],
      });
      const delay = killDelay(i);
      await Bun.sleep(delay);
      child.kill("SIGKILL");
      await child.exited;

      const files = sessionFiles(stateDir);
      if (storeArgs.length === 0 && files?.prompt !== undefined && !files.history.includes(JSON.stringify(prompt))) {
        failures.push(`run ${i} (killed at ${delay.toFixed(0)} ms): session.json shows "${files.prompt}" but the history has no such turn`);
      }
      const drained = await runAgent(["drain", "--workspace", workspace, "--state-dir", stateDir, "--base-url", answering.url, ...storeArgs], {
        env: { OPENAI_API_KEY: "test-key" },
      });
      if (drained.code === 4 || drained.stderr.includes("is busy")) {
        failures.push(`run ${i} (killed at ${delay.toFixed(0)} ms): drain refused: ${drained.stderr.trim()}`);
      } else if (drained.code !== 0) {
        failures.push(`run ${i}: drain exited ${drained.code}: ${drained.stderr.trim()}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  } finally {
    await answering.close();
  }
  return failures;
}

test(`kill -9 of agent run in its first second, then drain: never busy, no first prompt without its turn (${RUNS} runs)`, async () => {
  expect(await killThenDrain(RUNS, LOOPS, async () => [])).toEqual([]);
}, 180_000);

// The session's lock in PostgreSQL is an advisory lock on the runtime's own
// connection: the server drops it when the killed process's socket closes.
test("with a PostgreSQL store too: kill -9 of agent run, then drain, never busy (20 runs)", async () => {
  cluster ??= startPostgres();
  const pg = await cluster;
  expect(await killThenDrain(20, 2, async () => ["--store", await pg.database()])).toEqual([]);
}, 180_000);
