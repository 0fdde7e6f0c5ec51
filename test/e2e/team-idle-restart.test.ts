import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { openOsLock } from "../../src/storage/os-lock.ts";
import { clusterForFile } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { hook, until } from "./hook-fixture.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";
import { waitUntil } from "../support/deadline.ts";

// An idle notice survives a kill between a teammate's last ack and its notice
// (docs/team.md#idle-notices): the TeammateIdle hook runs in that window, so the
// run is killed (SIGKILL) while the hook holds it there; `agent drain` then sends
// the notice it owes, once. On each store.

const pg = clusterForFile(() => ensureBinary());
const stores = [
  { name: "files", args: async () => [] as string[] },
  { name: "PostgreSQL", args: async () => ["--store", await pg().database()] },
];

// First call: says where it runs (its pid, once the file is whole) and stays there until killed. Later calls let the teammate go idle.
const HOLD_ONCE = `#!/bin/sh
if [ -e held ]; then exit 0; fi
echo $$ > held.tmp && mv held.tmp held
exec sleep 300
`;

/**
 * Runs the Lead's prompt until alice's TeammateIdle hook holds her loop (after her
 * message's ack, before her idle notice), then kills the run and the hook.
 */
async function runKilledInHook(workspace: string, common: string[]): Promise<void> {
  const child = Bun.spawn([AGENT_BINARY, "run", "Count the tables with a helper.", "--permission-mode", "bypassPermissions", "--trust-project", ...common], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const held = join(workspace, "held");
  await until(() => existsSync(held) || child.exitCode !== null, "the TeammateIdle hook to run");
  expect(existsSync(held)).toBe(true);
  child.kill("SIGKILL");
  await child.exited;
  process.kill(Number(readFileSync(held, "utf8")), "SIGKILL");
}

describe.each(stores)("idle notice across a kill, store: $name", (store) => {
  test("killed between alice's ack and her idle notice, the next runtime sends the notice once", async () => {
    const { workspace, stateDir, drain, agent, sessionDir } = teamSetup();
    hook(workspace, "TeammateIdle", "hold.sh", HOLD_ONCE);
    // The Lead answers every event turn alike, however the events are batched.
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "Count the tables." } }] },
        { identity: "lead", text: "alice is counting" },
        { identity: "alice", text: "3 tables" },
      ],
      { respond: () => ({ text: "noted" }) },
    );
    try {
      const storeArgs = await store.args();
      await runKilledInHook(workspace, ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--output", "json", ...storeArgs]);
      expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(1);

      const drained = await drain(["--base-url", server.url, "--output", "json", ...storeArgs]);
      expect({ code: drained.code, stderr: drained.code === 0 ? "" : drained.stderr }).toEqual({ code: 0, stderr: "" });
      server.assertDone();
      // Her turn is not run again; the Lead's history holds her result and one idle notice.
      expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(1);
      const last = server.requests.filter((r: RecordedRequest) => r.identity === "lead").at(-1)!;
      const fromAlice = eventsIn(last).filter((event) => event.from === "alice");
      expect(fromAlice).toEqual([
        { from: "alice", kind: "result", content: "3 tables" },
        { from: "alice", kind: "idle", content: "alice is idle" },
      ]);
      expect(JSON.parse(drained.stdout)).toMatchObject({ teammates: [{ name: "alice", state: "idle" }] });

      // A kill after her notice but before team.json said idle: the next runtime's notice is a refused copy.
      if (store.name === "files") {
        const registry = new FileTeamRegistry(sessionDir());
        const [alice] = await registry.read();
        await registry.put({ ...alice!, state: "running" });
        const again = await drain(["--base-url", server.url, "--output", "json"]);
        expect({ code: again.code, stderr: again.code === 0 ? "" : again.stderr }).toEqual({ code: 0, stderr: "" });
        const listed = await agent("mailbox", "list", "--agent", "lead", "--json");
        const messages = (JSON.parse(listed.stdout) as { agents: { messages: { sender: string; kind: string }[] }[] }).agents[0]!.messages;
        expect(messages.filter((m) => m.sender === "alice").map((m) => m.kind)).toEqual(["result", "idle"]);
        expect((await registry.read()).map((t) => t.state)).toEqual(["idle"]);
      }
    } finally {
      await server.close();
    }
  }, 120_000);
});

// The Lead's mailbox is recovered before any teammate's loop starts again: a result
// the killed Lead had claimed (in processing/, not yet in its history) is ready again
// before the notice that follows it is sent, and the Lead takes the two in order.
// alice's row in team.json is held locked, so the restore waits at its write of her
// state with her loop already running: had the Lead's recovery come after that write,
// her notice would reach the Lead first (seen under load before the fix).
interface ClaimUndone {
  name: string;
  store(): Promise<string[]>;
  /** Leaves alice's result in the Lead's processing/ as the killed Lead's claim would; its id. */
  claimResult(sessionDir: string): Promise<string>;
  /** Holds alice's entry in team.json against writes; lets go when called. */
  holdAlice(sessionDir: string): Promise<() => Promise<void>>;
  /** Whether the Lead has claimed alice's idle notice. */
  idleClaimed(sessionDir: string): Promise<boolean>;
  close(): Promise<void>;
}

function fileMessages(sessionDir: string, state: string): { id: string; sender: string; kind: string; file: string }[] {
  const dir = join(sessionDir, "mailboxes", "lead", state);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json") && !name.endsWith(".reason.json"))
    .map((name) => ({ ...(JSON.parse(readFileSync(join(dir, name), "utf8")) as { id: string; sender: string; kind: string }), file: name }));
}

const filesUndone = (): ClaimUndone => ({
  name: "files",
  store: async () => [],
  async claimResult(sessionDir) {
    const ready = fileMessages(sessionDir, "ready").find((m) => m.sender === "alice" && m.kind === "result");
    if (ready) renameSync(join(sessionDir, "mailboxes", "lead", "ready", ready.file), join(sessionDir, "mailboxes", "lead", "processing", ready.file));
    const claimed = fileMessages(sessionDir, "processing").filter((m) => m.sender === "alice" && m.kind === "result");
    expect(claimed).toHaveLength(1);
    return claimed[0]!.id;
  },
  async holdAlice(sessionDir) {
    const lock = openOsLock(join(sessionDir, "team.lock.flock"))!;
    expect(lock.tryTake()).toBe(true);
    return async () => {
      lock.give();
      lock.close();
    };
  },
  async idleClaimed(sessionDir) {
    return ["processing", "done"].some((state) => fileMessages(sessionDir, state).some((m) => m.kind === "idle"));
  },
  close: async () => {},
});

function postgresUndone(): ClaimUndone {
  let sql: InstanceType<typeof Bun.SQL> | undefined;
  let url = "";
  return {
    name: "PostgreSQL",
    async store() {
      url = await pg().database();
      sql = new Bun.SQL(url, { max: 2 });
      return ["--store", url];
    },
    async claimResult(sessionDir) {
      // Processing under a lease still running, whether or not the killed Lead's pump had got there.
      const claimed = await sql!`
        UPDATE agent_messages SET state = 'processing', lease_owner = 'killed', lease_token = 'killed', lease_until = now() + interval '1 hour'
        WHERE session = ${basename(sessionDir)} AND agent = 'lead' AND sender = 'alice' AND kind = 'result' AND state <> 'done' RETURNING id`;
      expect(claimed).toHaveLength(1);
      return claimed[0].id as string;
    },
    async holdAlice(sessionDir) {
      const locked = Promise.withResolvers<void>();
      const letGo = Promise.withResolvers<void>();
      const holding = sql!
        .begin(async (tx) => {
          await tx`SELECT 1 FROM agent_teammates WHERE session = ${basename(sessionDir)} AND name = 'alice' FOR UPDATE`;
          locked.resolve();
          await letGo.promise;
          throw new Error("let go");
        })
        .catch(() => {});
      await locked.promise;
      return async () => {
        letGo.resolve();
        await holding;
      };
    },
    async idleClaimed(sessionDir) {
      const rows = await sql!`SELECT 1 FROM agent_messages WHERE session = ${basename(sessionDir)} AND agent = 'lead' AND kind = 'idle' AND state <> 'ready'`;
      return rows.length === 1;
    },
    close: async () => {
      await sql?.close();
    },
  };
}

describe.each([filesUndone(), postgresUndone()])("idle notice across a kill, the Lead's claim undone, store: $name", (store: ClaimUndone) => {
  test("a result the killed Lead had claimed reaches its next turn before alice's owed idle notice", async () => {
    const { workspace, stateDir, drain, sessionDir } = teamSetup();
    hook(workspace, "TeammateIdle", "hold.sh", HOLD_ONCE);
    const never = Promise.withResolvers<void>();
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "helper", prompt: "Count the tables." } }] },
        // Not answered in the first run: the Lead is mid-request when the kill comes, so alice's result is not in its history.
        { identity: "lead", gate: never.promise, text: "never delivered" },
        { identity: "alice", text: "3 tables" },
        { identity: "lead", text: "alice is counting" },
      ],
      { respond: () => ({ text: "noted" }) },
    );
    try {
      const storeArgs = await store.store();
      await runKilledInHook(workspace, ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--output", "json", ...storeArgs]);
      await store.claimResult(sessionDir());

      const letGo = await store.holdAlice(sessionDir());
      const drained = drain(["--base-url", server.url, "--output", "json", ...storeArgs]);
      try {
        // Her loop sent the owed notice and the Lead's pump took it, while the restore waits to write her state.
        await waitUntil(() => store.idleClaimed(sessionDir()), "the Lead to claim alice's idle notice");
      } finally {
        await letGo();
      }
      const done = await drained;
      expect({ code: done.code, stderr: done.code === 0 ? "" : done.stderr }).toEqual({ code: 0, stderr: "" });
      const last = server.requests.filter((r: RecordedRequest) => r.identity === "lead").at(-1)!;
      expect(eventsIn(last).filter((event) => event.from === "alice")).toEqual([
        { from: "alice", kind: "result", content: "3 tables" },
        { from: "alice", kind: "idle", content: "alice is idle" },
      ]);
      expect(server.requests.filter((r) => r.identity === "alice")).toHaveLength(1);
    } finally {
      never.resolve();
      await store.close();
      await server.close();
    }
  }, 120_000);
});
