// kill -9 of a team run around a mid-turn delivery, then `agent drain`: the
// operator's word, sent while alice (or the Lead itself) waits for step 3 of 10,
// is in that agent's history exactly once, before step 4's request, and nothing
// of it is left in processing/
// — whether the kill lands before it was taken, between its history append and
// its ack (the window the turn's replay must find by id), or after. Half the
// rounds kill right after the append shows in her history (a watcher process
// polling it), half at a random delay after step 3's answer is released.
//
// Reproduce with MID_TURN_CRASH_SEEDS=seed,seed,… (the seeds are printed);
// MID_TURN_CRASH_ROUNDS sets how many random ones (default 30 for alice, half
// as many for the Lead).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { derivedId } from "../../src/team/derived-id.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary, runAgent } from "../e2e/agent-binary.ts";
import { type TeamChild, TeamChildren, type TeamDirs, lastStep, teamDirs, until } from "../fixtures/team-children.ts";
import { type TeamFiles, readTeamFiles, readTeamRows } from "../fixtures/team-files.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { STEP_FILE, TEN_STEPS_PROMPT, envelopeOf, leadTenSteps, stepsDone, tenSteps } from "../fixtures/ten-steps.ts";
import { seededRandom } from "../support/seeded-random.ts";

const ROUNDS = Number(process.env.MID_TURN_CRASH_ROUNDS ?? 30);
const SEEDS = process.env.MID_TURN_CRASH_SEEDS
  ? process.env.MID_TURN_CRASH_SEEDS.split(",").map(Number)
  : Array.from({ length: ROUNDS }, () => Math.floor(Math.random() * 1_000_000));
const WORD = "Also note the time of each step.";
const KILLER = join(import.meta.dir, "..", "fixtures", "kill-on-history.ts");

const children = new TeamChildren("binary");
const servers: ScriptedModelServer[] = [];
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  await children.killAll();
  for (const server of servers.splice(0)) await server.close();
});

/** Waits for the child to end; says how (killed where, or finished first). */
async function ended(child: TeamChild, how: string): Promise<string> {
  const end = await child.finished;
  if (end.signalCode === "SIGKILL") return `${how}: ${lastStep(child)}`;
  if (end.exitCode !== 0) throw new Error(`run exited ${end.exitCode} before the kill:\n${end.stderr}`);
  return `${how}: finished first`;
}

/**
 * Whose turn the word reaches: alice (spawned on ten steps by the Lead, the word
 * by `team send`) or the Lead itself (by `mailbox send --to lead`); on the files
 * store, or on PostgreSQL (fewer rounds, and only kills at a random delay: its
 * history is rows, not a file a watcher can poll).
 */
const AGENTS = [
  { who: "alice", store: "files", seeds: SEEDS, prompt: TEN_STEPS_PROMPT, script: tenSteps, send: ["team", "send", "alice", WORD] },
  { who: "lead", store: "files", seeds: SEEDS.slice(0, Math.ceil(SEEDS.length / 2)), prompt: "Take your ten steps.", script: leadTenSteps, send: ["mailbox", "send", "--to", "lead", "--from", "user", "--content", WORD] },
  { who: "alice", store: "postgres", seeds: SEEDS.slice(0, Math.ceil(SEEDS.length / 5)), prompt: TEN_STEPS_PROMPT, script: tenSteps, send: ["team", "send", "alice", WORD] },
];

let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});

/** What the run left: the session's files, or its rows. */
function teamState(dirs: TeamDirs): Promise<TeamFiles> {
  return dirs.store === undefined ? Promise.resolve(readTeamFiles(dirs.stateDir)) : readTeamRows(dirs.store, dirs.sessionId);
}

describe.each(AGENTS)("a mid-turn delivery to $who killed with SIGKILL, then drained ($store)", ({ who, store, seeds, prompt, script, send }) => {
  for (const seed of seeds) {
    test(`seed ${seed}: the word is in ${who}'s history once, before step 4; nothing left in processing/`, async () => {
      const rng = seededRandom(seed);
      const hold = Promise.withResolvers<void>();
      const server = ScriptedModelServer.start([], { respond: script(hold.promise) });
      servers.push(server);
      const dirs: TeamDirs = store === "files" ? teamDirs() : { ...teamDirs(), store: await (await (cluster ??= startPostgres())).database() };
      writeFileSync(join(dirs.workspace, STEP_FILE), "step notes\n");
      const run = children.start("run", dirs, server.url, prompt);
      const requests = () => server.requests.filter((r) => r.identity === who);
      expect(await until(() => requests().some((r) => stepsDone(r) === 2), 30_000)).toBe(true);
      const sent = await runAgent([...send, "--session", dirs.sessionId, "--state-dir", dirs.root, ...(dirs.store ? ["--store", dirs.store] : [])]);
      expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: "" });
      const id = sent.stdout.trim();

      let how: string;
      if (store === "files" && rng() < 0.5) {
        const delayMicros = Math.round(rng() * 3000);
        const killer = Bun.spawn([process.execPath, KILLER, String(run.proc.pid), join(dirs.stateDir, "agents", `${who}.jsonl`), id, String(delayMicros)], {
          stdout: "pipe",
          stderr: "inherit",
        });
        const reader = killer.stdout.getReader();
        await reader.read();
        reader.releaseLock();
        hold.resolve();
        how = `${delayMicros} µs after the append showed`;
        await run.finished;
        killer.kill("SIGKILL");
        await killer.exited;
      } else {
        const delayMs = Math.round(rng() * 60);
        hold.resolve();
        await Bun.sleep(delayMs);
        if (!run.exited) run.proc.kill("SIGKILL");
        how = `${delayMs} ms after step 3's answer`;
      }
      const kill = await ended(run, how);
      // Between the append and the ack: in the history, still in processing/.
      const left = await teamState(dirs);
      const inHistory = (left.histories.get(who) ?? []).some((r) => r.type === "turn" && r.key === id);
      const inWindow = inHistory && left.census.byId.get(id)?.some((place) => place.state === "processing") === true;

      const drain = children.start("drain", dirs, server.url);
      const end = await drain.finished;
      if (end.exitCode !== 0) throw new Error(`the drain exited ${end.exitCode}:\n${end.stderr}`);
      console.log(`${who} (${store}), seed ${seed}: ${kill}${inWindow ? " — between the history append and the ack" : ""}`);

      const files = await teamState(dirs);
      const messages = files.histories.get(who)!.flatMap((r) => (r.type === "message" ? [r.message as unknown as Record<string, unknown>] : []));
      const copies = messages.flatMap((m, at) => (envelopeOf(m)?.agent_event.id === id ? [at] : []));
      // Before step 4 was asked for: three steps asked for before it (two, when the kill
      // came before step 3's answer was recorded: the drain's resumed turn takes it first).
      const asked = (at: number) => messages.slice(0, at).filter((m) => m.role === "assistant").length;
      const reply = derivedId(id, "result");
      expect({
        copies: copies.length,
        beforeStep4: copies.map((at) => asked(at) >= 2 && asked(at) <= 3),
        place: files.census.byId.get(id)?.map((p) => p.state),
        // The operator's answer waits in the mailbox of `user`, read by `team send --wait`: not a loose end.
        violations: files.violations.filter((v) => !v.startsWith(`not done: user/ready/${reply}`)),
        // alice answers the operator's word with her turn's answer; the Lead's answer is its output.
        reply: files.census.byId.get(reply)?.map((p) => `${p.agent}/${p.state}`),
        problems: server.problems,
      }).toEqual({
        copies: 1,
        beforeStep4: [true],
        place: ["done"],
        violations: [],
        reply: who === "alice" ? ["user/ready"] : undefined,
        problems: [],
      });
    }, 60_000);
  }
});
