import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import type { MailboxStore } from "../../src/mailbox/store.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { FileTeamRegistry, type TeamRegistry } from "../../src/team/team-registry.ts";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { derivedId } from "../../src/team/derived-id.ts";
import { teamBinaries } from "./team-binaries.ts";
import { hook, until as untilTrue } from "./hook-fixture.ts";
import { parseResult, runSetup } from "./run-fixture.ts";
import { eventsIn } from "./team-fixture.ts";

// A worker killed just after a teammate's last ack: alice's result and idle
// notice are with the Lead, her task is acknowledged, and her record still says
// "running" (the write that stores her idle never landed). No process holds
// her. A worker started then takes her over with an empty mailbox and stores
// her idle, so `agent drain --remote-teammates` answers her result and ends;
// it used to wait for ever ("alice still running"). The idle write is kept from
// landing by holding the registry's lock (team.lock's flock on files, her row
// on PostgreSQL) from after her turn began until the worker is killed.

const ALICE_RESULT = "alice: the schema has 2 tables";
const FINAL = "alice counted them.";
/** Far above a drain's time on a loaded machine: a drain past it waits for ever. */
const DEADLINE_MS = 60_000;

const team = teamBinaries();
const { start } = team;

/** Where the team is, and how the test holds its registry's writes back. */
interface Backend {
  name: string;
  args(): Promise<string[]>;
  open(sessionDir: string): { registry: TeamRegistry; store: MailboxStore };
  /** Holds every write of alice's record until the returned function is called. */
  holdWrites(sessionDir: string): Promise<() => Promise<void>>;
}

const files: Backend = {
  name: "files (a shared state dir)",
  args: async () => [],
  open: (sessionDir) => ({ registry: new FileTeamRegistry(sessionDir), store: new FileMailboxStore({ stateDir: sessionDir }) }),
  async holdWrites(sessionDir) {
    // The registry's writes take flock(2) on team.lock.flock: a process of ours holds it until its stdin closes.
    const holder = Bun.spawn(["flock", "-x", join(sessionDir, "team.lock.flock"), "-c", "echo held; cat"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    team.track(holder);
    const reader = holder.stdout.getReader();
    let said = "";
    while (!said.includes("held")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("flock exited before holding team.lock.flock");
      said += new TextDecoder().decode(value);
    }
    return async () => {
      await holder.stdin.end();
      await holder.exited;
    };
  },
};

function postgres(): Backend {
  let url = "";
  return {
    name: "PostgreSQL",
    async args() {
      url = await team.postgresUrl();
      return ["--store", url];
    },
    open(sessionDir) {
      const sql = team.pool(url);
      const session = basename(sessionDir);
      return { registry: new PgTeamRegistry(sql, session), store: new PgMailboxStore({ sql, session }) };
    },
    async holdWrites(sessionDir) {
      const sql = team.pool(url, 1);
      const held = Promise.withResolvers<void>();
      const release = Promise.withResolvers<void>();
      // Her row locked in a transaction left open: an update of it waits; rolled back when let go.
      const transaction = sql
        .begin(async (tx) => {
          await tx`SELECT 1 FROM agent_teammates WHERE session = ${basename(sessionDir)} AND name = 'alice' FOR UPDATE`;
          held.resolve();
          await release.promise;
          throw new Error("let go");
        })
        .catch(() => {});
      await held.promise;
      return async () => {
        release.resolve();
        await transaction;
      };
    },
  };
}

/** Polls `read` until `ok` says yes, or fails saying what it last saw. */
async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const from = Date.now();
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() - from > 30_000) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await Bun.sleep(25);
  }
}

/** Runs `agent drain --remote-teammates` and expects it to end well within DEADLINE_MS (killed past it). */
async function drainWithin(common: string[]) {
  const drain = start(["drain", "--remote-teammates", "--output", "json", ...common]);
  const deadline = Promise.withResolvers<"waited for ever">();
  const timer = setTimeout(() => deadline.resolve("waited for ever"), DEADLINE_MS);
  const code = await Promise.race([drain.child.exited, deadline.promise]);
  clearTimeout(timer);
  if (code !== 0) drain.child.kill("SIGKILL");
  expect({ code, stderr: code === 0 ? "" : await drain.stderr }).toEqual({ code: 0, stderr: "" });
  return drain;
}

describe.each([files, postgres()])("a worker killed just after a teammate's last ack, store: $name", (backend: Backend) => {
  test("another worker takes the teammate over with an empty mailbox and stores it idle: drain --remote-teammates ends", async () => {
    const { workspace, stateDir, sessionDir } = runSetup();
    const aliceAsked = Promise.withResolvers<void>();
    const aliceGo = Promise.withResolvers<void>();
    const server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "count the tables" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", check: () => aliceAsked.resolve(), gate: aliceGo.promise, text: ALICE_RESULT },
      { identity: "lead", text: FINAL },
    ]);
    team.serve(server);
    const common = ["--session", "adopt", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await backend.args())];
    // The run spawns alice and returns: no process of its own runs her.
    const run = start(["run", "--remote-teammates", "--no-wait", ...common, "Have alice count the tables."]);
    expect(await run.child.exited).toBe(0);
    const killed = start(["worker", ...common]);
    await aliceAsked.promise;
    const dir = sessionDir();
    const { registry, store } = backend.open(dir);
    await until("alice stored running", () => registry.read(), (team) => team[0]?.state === "running");

    const letGo = await backend.holdWrites(dir);
    aliceGo.resolve();
    // Her result and idle notice with the Lead, her task acknowledged: her last ack is done.
    const counts = async () => Object.fromEntries((await store.list()).map((listing) => [listing.name, listing.counts]));
    await until("her result delivered and her task acked", counts, (now) => now.alice?.done === 1 && now.lead?.ready === 2);
    killed.child.kill("SIGKILL");
    expect(await killed.child.exited).toBe(137);
    await letGo();
    // What the kill left: "running", no holder, nothing in her mailbox.
    expect((await registry.read()).map((record) => record.state)).toEqual(["running"]);
    expect((await counts()).alice).toEqual({ ready: 0, processing: 0, done: 1, quarantine: 0 });

    const taker = start(["worker", ...common]);
    const drain = await drainWithin(common);
    expect(parseResult(await new Response(drain.child.stdout).text())).toMatchObject({ subtype: "success", result: FINAL });
    expect((await registry.read()).map((record) => record.state)).toEqual(["idle"]);
    taker.child.kill("SIGTERM");
    expect(await taker.child.exited).toBe(0);
    server.assertDone();
  }, 150_000);
});

// The same kill a moment later: alice's task is acknowledged and her idle
// notice is not sent yet (her TeammateIdle hook runs in that window: it says
// where it runs and stays there until killed). The worker that takes her over
// owes that notice: its loop sends it once, under the id derived from her
// task, and only then stores her idle. It used to store her idle at once and
// send nothing, so the Lead never heard that she was idle.

// First call: says where it runs (its pid, once the file is whole) and stays there until killed. Later calls let the teammate go idle.
const HOLD_ONCE = `#!/bin/sh
if [ -e held ]; then exit 0; fi
echo $$ > held.tmp && mv held.tmp held
exec sleep 300
`;

describe.each([files, postgres()])("a worker killed between a teammate's last ack and its idle notice, store: $name", (backend: Backend) => {
  test("the worker that takes the teammate over sends the notice it owes, once", async () => {
    const { workspace, stateDir, sessionDir } = runSetup();
    hook(workspace, "TeammateIdle", "hold.sh", HOLD_ONCE);
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "count the tables" } }] },
        { identity: "lead", text: "alice is on it." },
        { identity: "alice", text: ALICE_RESULT },
      ],
      // The Lead answers every event turn alike, however her result and notice are batched.
      { respond: () => ({ text: FINAL }) },
    );
    team.serve(server);
    const common = ["--session", "adopt-idle", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--trust-project", ...(await backend.args())];
    const run = start(["run", "--remote-teammates", "--no-wait", ...common, "Have alice count the tables."]);
    expect(await run.child.exited).toBe(0);
    const killed = start(["worker", ...common]);
    const held = join(workspace, "held");
    // The hook runs after her task is acked and before her notice is sent: the kill lands between the two.
    await untilTrue(() => existsSync(held) || killed.child.exitCode !== null, "her TeammateIdle hook to run");
    expect(existsSync(held)).toBe(true);
    killed.child.kill("SIGKILL");
    expect(await killed.child.exited).toBe(137);
    process.kill(Number(readFileSync(held, "utf8")), "SIGKILL");

    const dir = sessionDir();
    const { registry, store } = backend.open(dir);
    const task = (await store.list({ agent: "alice" }))[0]!.messages;
    expect(task.map((m) => [m.state, m.kind])).toEqual([["done", "task"]]);
    const fromAlice = async () => (await store.list({ agent: "lead" })).flatMap((l) => l.messages).filter((m) => m.sender === "alice");
    expect((await fromAlice()).map((m) => m.kind)).toEqual(["result"]);
    expect((await registry.read()).map((record) => record.state)).toEqual(["running"]);

    const taker = start(["worker", ...common]);
    await drainWithin(common);
    // Her turn ran once; the Lead heard her result and one idle notice, under the id derived from her task.
    expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(1);
    const last = server.requests.filter((r: RecordedRequest) => r.identity === "lead").at(-1)!;
    expect(eventsIn(last).filter((event) => event.from === "alice")).toEqual([
      { from: "alice", kind: "result", content: ALICE_RESULT },
      { from: "alice", kind: "idle", content: "alice is idle" },
    ]);
    const notices = (await fromAlice()).filter((m) => m.kind === "idle");
    expect(notices.map((m) => m.id)).toEqual([derivedId(task[0]!.id!, "idle")]);
    await until("alice stored idle", () => registry.read(), (team) => team[0]?.state === "idle");
    taker.child.kill("SIGTERM");
    expect(await taker.child.exited).toBe(0);
  }, 150_000);
});
