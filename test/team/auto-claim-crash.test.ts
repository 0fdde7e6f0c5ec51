// kill -9 of a team whose teammates claim tasks themselves, at random points
// (mid-claim, mid-task, between a task's completion and its result, in the
// Lead's batched event turns), then drains until one finishes: every task of
// the graph completed exactly once, after its blockers; per task one claim
// notice and one result to the Lead; every message done once and answered once.
//
// Reproduce with AUTO_CLAIM_CRASH_SEEDS=seed,seed,… (the seeds are printed).
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Task } from "../../src/tasks/task.ts";
import { AutoClaim } from "../../src/team/auto-claim.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary } from "../e2e/agent-binary.ts";
import { type TeamChild, TeamChildren, type TeamRunner, lastStep, teamDirs, until } from "../fixtures/team-children.ts";
import { readTeamFiles } from "../fixtures/team-files.ts";
import { type WireMessage, unansweredToolCalls } from "../fixtures/team-model.ts";
import { seededRandom } from "../support/seeded-random.ts";

const SEEDS = process.env.AUTO_CLAIM_CRASH_SEEDS
  ? process.env.AUTO_CLAIM_CRASH_SEEDS.split(",").map(Number)
  : Array.from({ length: 4 }, () => Math.floor(Math.random() * 1_000_000));
const KILL_AFTER_MS = { run: [100, 2_000], drain: [50, 1_000] } as const;
const RUNNER: TeamRunner = process.env.TEAM_CRASH_RUNNER === "fixture" ? "fixture" : "binary";

const PROMPT = "Plan the users feature as tasks and have alice and bob take them.";
const TASKS = [
  { subject: "write the schema" },
  { subject: "write the API", blockedBy: ["t1"] },
  { subject: "document the schema", blockedBy: ["t1"] },
  { subject: "test the API against the docs", blockedBy: ["t2", "t3"] },
  { subject: "update the changelog" },
];
const NAMES = ["alice", "bob"];

const children = new TeamChildren(RUNNER);
const servers: ScriptedModelServer[] = [];
beforeAll(() => {
  if (RUNNER === "binary") ensureBinary();
}, 120_000);
afterEach(async () => {
  await children.killAll();
  for (const server of servers.splice(0)) await server.close();
});

/**
 * Replies as a function of the request, so a turn resumed after any number of
 * kills gets a sensible answer. The Lead creates the tasks, then, as a model told
 * a call did not finish would, creates those the task graph does not hold yet
 * and spawns whoever its history does not show spawned yet (a call the kill cut
 * off is tried again), then notes events. A teammate writes `<task>.txt` for a claimed task,
 * then answers; delays put kills in the middle of that work.
 */
function model(seed: number, protocolErrors: string[], stateDir: string) {
  return (request: RecordedRequest): ScriptedReply => {
    const name = request.identity ?? "";
    const messages = (request.body.messages as WireMessage[]).filter((m) => m.role !== "system");
    protocolErrors.push(...unansweredToolCalls(messages).map((problem) => `${name}: ${problem}`));
    const last = messages.at(-1);
    const delayMs = 30 + (hash(`${seed}|${name}|${messages.length}`) % 170);
    if (name === "lead") {
      if (last?.role === "user" && last.content === PROMPT) return { toolCalls: TASKS.map((task) => ({ name: "create_task", arguments: task })) };
      if (last?.role === "tool") {
        // Those a kill cut off, in order: the ones made are the first few, so the ids (and blockers) come out as planned.
        const made = new Set(readTasks(stateDir).map((task) => task.subject));
        const unmade = TASKS.filter((task) => !made.has(task.subject));
        if (unmade.length > 0) return { toolCalls: unmade.map((task) => ({ name: "create_task", arguments: task })) };
        const results = messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        const spawned = (who: string) => results.some((r) => r.startsWith(`spawned ${who} `) || r.includes(`a teammate named "${who}" already exists`));
        const missing = NAMES.filter((who) => !spawned(who));
        if (missing.length > 0) {
          return {
            toolCalls: missing.map((who) => ({
              name: "spawn_teammate",
              arguments: { name: who, role: "developer", prompt: "You will take tasks from the task graph. Say you are ready.", auto_claim: true },
            })),
          };
        }
        return { text: "the team is on it" };
      }
      return { delayMs: delayMs / 3, text: "noted" };
    }
    const prompt = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const task = /^You claimed task (t\d+)/.exec(prompt)?.[1];
    if (!task) return { text: `${name} is ready` };
    if (last?.role === "user") return { delayMs, toolCalls: [{ name: "write_file", arguments: { path: `${task}.txt`, content: `${name}\n` } }] };
    return { delayMs, text: `${name} did ${task}` };
  };
}

/**
 * Lets the child get going (its first model request: a run killed before its
 * prompt reached the history leaves nothing to drain, and no task to check),
 * then SIGKILLs it `delayMs` later, unless it finished first.
 */
async function killAfter(child: TeamChild, server: ScriptedModelServer, delayMs: number): Promise<string> {
  const before = server.requests.length;
  await until(() => child.exited || server.requests.length > before, child.mode === "run" ? 20_000 : 3_000);
  await Promise.race([Bun.sleep(delayMs), child.finished]);
  if (!child.exited) child.proc.kill("SIGKILL");
  const end = await child.finished;
  if (end.signalCode === "SIGKILL") return `${child.mode} +${delayMs}ms: ${lastStep(child)}`;
  if (end.exitCode !== 0) throw new Error(`${child.mode} exited ${end.exitCode} before the kill:\n${end.stderr}`);
  return `${child.mode} +${delayMs}ms: finished first`;
}

function readTasks(stateDir: string): Task[] {
  let files: string[] = [];
  try {
    files = readdirSync(join(stateDir, "tasks")).filter((file) => file.endsWith(".json"));
  } catch {
    return [];
  }
  return files.map((file) => Task.parse(JSON.parse(readFileSync(join(stateDir, "tasks", file), "utf8")))).sort((a, b) => a.id.localeCompare(b.id));
}

describe("self-claiming teammates killed with SIGKILL, then drained", () => {
  for (const seed of SEEDS) {
    test(
      `seed ${seed}: every task completed exactly once, after its blockers; each claim and result reached the Lead once`,
      async () => {
        const rng = seededRandom(seed);
        const delay = (mode: "run" | "drain") => {
          const [low, high] = KILL_AFTER_MS[mode];
          return Math.round(low + rng() * (high - low));
        };
        const protocolErrors: string[] = [];
        const dirs = teamDirs();
        const server = ScriptedModelServer.start([], { respond: model(seed, protocolErrors, dirs.stateDir) });
        servers.push(server);

        const kills = [await killAfter(children.start("run", dirs, server.url, PROMPT), server, delay("run"))];
        const killedDrains = 1 + Math.floor(rng() * 2);
        for (let i = 0; i < killedDrains; i++) kills.push(await killAfter(children.start("drain", dirs, server.url), server, delay("drain")));
        const drain = children.start("drain", dirs, server.url);
        const end = await drain.finished;
        if (end.exitCode !== 0) throw new Error(`the last drain exited ${end.exitCode}:\n${end.stderr}`);

        const files = readTeamFiles(dirs.stateDir);
        const tasks = readTasks(dirs.stateDir);
        const toLead = files.messages.filter((m) => m.recipient === "lead");
        const problems: string[] = [];
        // A kill during the Lead's create_task calls is followed by the calls again for what is missing.
        if (tasks.length !== TASKS.length) problems.push(`${tasks.length} tasks of ${TASKS.length}: ${tasks.map((task) => task.subject).join(", ")}`);
        for (const task of tasks) {
          if (task.status !== "completed") problems.push(`${task.id} is ${task.status}${task.owner ? ` (${task.owner})` : ""}`);
          for (const blocker of task.blockedBy) {
            const done = tasks.find((t) => t.id === blocker)?.completedAtUtc;
            if (!done || !task.claimedAtUtc || done > task.claimedAtUtc) problems.push(`${task.id} was claimed before its blocker ${blocker} was completed`);
          }
          const worked = files.messages.filter((m) => m.id === AutoClaim.taskMessageId(task.id));
          if (worked.length !== 1 || worked[0]!.recipient !== task.owner) problems.push(`${task.id}: ${worked.length} task messages (owner ${task.owner})`);
          for (const kind of ["task_claimed", "result"]) {
            const count = toLead.filter((m) => m.kind === kind && m.taskId === task.id).length;
            if (count !== 1) problems.push(`${task.id}: ${count} ${kind} messages to the Lead`);
          }
        }
        console.log(
          `seed ${seed} (${RUNNER}): ${kills.join(" | ")}\n  ${tasks.length} tasks (${tasks.map((t) => `${t.id}:${t.owner ?? "-"}`).join(" ")}), ` +
            `${files.messages.length} messages, ${server.requests.length} model requests`,
        );
        expect({ files: files.violations, tasks: problems, protocol: protocolErrors, server: server.problems }).toEqual({
          files: [],
          tasks: [],
          protocol: [],
          server: [],
        });
      },
      90_000,
    );
  }
});

/** FNV-1a: a small stable hash for delays. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
