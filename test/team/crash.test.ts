// kill -9 of a team run at random points, then drains until one finishes (the
// binary's `agent drain` finds the session by itself, beside another one): every
// message is done, in exactly one place, and in its recipient's history exactly
// once; every event turn of the Lead and every teammate turn finished; each
// teammate's result reached the Lead once. The scripted model server lives in
// this process, so it outlives the killed runtimes; its answers follow from each
// request (test/fixtures/team-model.ts), so replays get sensible answers.
//
// Reproduce with TEAM_CRASH_SEEDS=seed,seed,… (the seeds are printed); the
// timing of the agents still varies from run to run.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary } from "../e2e/agent-binary.ts";
import { type TeamChild, TeamChildren, type TeamRunner, lastStep, outcomeOf, teamDirs, until } from "../fixtures/team-children.ts";
import { type TeamFiles, readTeamFiles, readTeamRows } from "../fixtures/team-files.ts";
import { clusterForFile } from "../support/postgres.ts";
import { TEAM_PROMPT, TeamModel } from "../fixtures/team-model.ts";
import { seededRandom } from "../support/seeded-random.ts";

const SEEDS = process.env.TEAM_CRASH_SEEDS
  ? process.env.TEAM_CRASH_SEEDS.split(",").map(Number)
  : Array.from({ length: 10 }, () => Math.floor(Math.random() * 1_000_000));
/** Fewer on PostgreSQL (the same runtime over another store); TEAM_CRASH_SEEDS sets both. */
const PG_SEEDS = process.env.TEAM_CRASH_SEEDS ? SEEDS : SEEDS.slice(0, 4);
/**
 * Kill this long after the child's first model request (or its start, if it
 * makes none within 3 s). A drain has less left to do than the run before it:
 * a shorter range lands more of its kills before it finishes.
 */
const KILL_AFTER_MS = { run: [20, 800], drain: [20, 500] } as const;

/** `agent run` and `agent drain` as users run them; TEAM_CRASH_RUNNER=fixture runs the same runtime without the CLI. */
const RUNNER: TeamRunner = process.env.TEAM_CRASH_RUNNER === "fixture" ? "fixture" : "binary";

const children = new TeamChildren(RUNNER);
const servers: ScriptedModelServer[] = [];
beforeAll(() => {
  if (RUNNER === "binary") ensureBinary();
}, 120_000);
afterEach(async () => {
  await children.killAll();
  for (const server of servers.splice(0)) await server.close();
});

/** Lets the child get going (its first model request), then SIGKILLs it `delayMs` later, unless it finished first. */
async function killAfter(child: TeamChild, server: ScriptedModelServer, delayMs: number): Promise<string> {
  const before = server.requests.length;
  await until(() => child.exited || server.requests.length > before, 3_000);
  await Promise.race([Bun.sleep(delayMs), child.finished]);
  if (!child.exited) child.proc.kill("SIGKILL");
  // It may also have exited on its own just before the kill.
  const end = await child.finished;
  if (end.signalCode === "SIGKILL") return `${child.mode} +${delayMs}ms: ${lastStep(child)}`;
  if (end.exitCode !== 0) throw new Error(`${child.mode} exited ${end.exitCode} before the kill:\n${end.stderr}\n${JSON.stringify(child.lines.at(-1))}`);
  return `${child.mode} +${delayMs}ms: finished first`;
}

/** Whether a child's line tells of a protocol message (shutdown, plan approval, permission). */
function isProtocolLine(line: Record<string, unknown>): boolean {
  const team = line.team as Record<string, unknown> | undefined;
  return line.type === "protocol" || team?.type === "protocol";
}

/**
 * SIGKILLs the child `delayMs` after it tells of its first protocol message
 * (a request or an answer just sent or taken up), so the kill lands with one
 * in flight; unless it finished first.
 */
async function killAtProtocol(child: TeamChild, delayMs: number): Promise<string> {
  await until(() => child.exited || child.lines.some(isProtocolLine), 15_000);
  await Promise.race([Bun.sleep(delayMs), child.finished]);
  if (!child.exited) child.proc.kill("SIGKILL");
  const end = await child.finished;
  if (end.signalCode === "SIGKILL") return `${child.mode} at a protocol message +${delayMs}ms: ${lastStep(child)}`;
  if (end.exitCode !== 0) throw new Error(`${child.mode} exited ${end.exitCode} before the kill:\n${end.stderr}\n${JSON.stringify(child.lines.at(-1))}`);
  return `${child.mode} at a protocol message: finished first`;
}

/** The last drain's events and turns, as its report gives them. */
function summary(outcome: Record<string, unknown> | undefined): string {
  if (!outcome) return "?";
  const { events, turns, event_turns, teammates } = outcome as Record<string, unknown>;
  return JSON.stringify({ events, turns: event_turns ?? turns, ...(Array.isArray(teammates) ? { teammates: teammates.length } : {}) });
}

const pg = clusterForFile();

/** Where the team's state is: the session's files, or a fresh database of the PostgreSQL store (the binary only). */
const STORES = [
  { name: "files", seeds: SEEDS, store: async () => undefined },
  ...(RUNNER === "binary" ? [{ name: "postgres", seeds: PG_SEEDS, store: async () => pg().database() }] : []),
];

describe.each(STORES.map((store) => [store.name, store] as const))("a team run killed with SIGKILL, then drained (%s store)", (_name, backend) => {
  for (const seed of backend.seeds) {
    test(
      `seed ${seed}: every message done and in its recipient's history exactly once; every turn finished`,
      async () => {
        const started = performance.now();
        const rng = seededRandom(seed);
        const delay = (mode: "run" | "drain") => {
          const [low, high] = KILL_AFTER_MS[mode];
          return Math.round(low + rng() * (high - low));
        };
        const model = new TeamModel(seed);
        const server = ScriptedModelServer.start([], { respond: model.respond });
        servers.push(server);
        const store = await backend.store();
        const dirs = { ...teamDirs(), ...(store === undefined ? {} : { store }) };

        const kills = [await killAfter(children.start("run", dirs, server.url, TEAM_PROMPT), server, delay("run"))];
        const killedDrains = 1 + Math.floor(rng() * 2);
        for (let i = 0; i < killedDrains; i++) {
          const child = children.start("drain", dirs, server.url);
          // Half the killed drains die with a protocol message in flight.
          kills.push(rng() < 0.5 ? await killAtProtocol(child, Math.round(rng() * 150)) : await killAfter(child, server, delay("drain")));
        }
        const drain = children.start("drain", dirs, server.url);
        const end = await drain.finished;
        if (end.exitCode !== 0) throw new Error(`the last drain exited ${end.exitCode}:\n${end.stderr}\n${JSON.stringify(drain.lines.slice(-5))}`);
        const outcome = outcomeOf(drain);
        expect(outcome).toMatchObject(RUNNER === "fixture" ? { interrupted: false } : { type: "result", is_error: false });

        const files: TeamFiles = store === undefined ? readTeamFiles(dirs.stateDir) : await readTeamRows(store, dirs.sessionId);
        const byKind = (kind: string) => files.messages.filter((m) => m.kind === kind).length;
        console.log(
          `seed ${seed} (${RUNNER}, ${backend.name}): ${kills.join(" | ")} | last drain: ${summary(outcome)}\n` +
            `  ${files.team?.teammates.length ?? 0} teammates, ${files.messages.length} messages (${byKind("task")} tasks, ` +
            `${byKind("message")} messages, ${byKind("result")} results, ${files.messages.length - byKind("task") - byKind("message") - byKind("result")} protocol), ` +
            `${server.requests.length} model requests, ` +
            `${files.withoutTask.length ? `spawned without a task: ${files.withoutTask.join(",")}, ` : ""}${Math.round(performance.now() - started)} ms`,
        );
        // One assertion, so a failure shows every problem of the seed at once;
        // the other session of the root is as it was.
        expect({
          files: files.violations,
          protocol: model.protocolErrors,
          server: server.problems,
          other: readdirSync(dirs.otherDir),
        }).toEqual({ files: [], protocol: [], server: [], other: ["session.json"] });
      },
      60_000,
    );
  }
});
