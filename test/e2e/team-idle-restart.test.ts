import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { clusterForFile } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { hook, until } from "./hook-fixture.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";

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
      const common = ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--output", "json", ...storeArgs];
      const child = Bun.spawn([AGENT_BINARY, "run", "Count the tables with a helper.", "--permission-mode", "bypassPermissions", "--trust-project", ...common], {
        env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const held = join(workspace, "held");
      // The hook runs after alice's message is acked and before her notice is sent: the kill lands between the two.
      await until(() => existsSync(held) || child.exitCode !== null, "the TeammateIdle hook to run");
      expect(existsSync(held)).toBe(true);
      child.kill("SIGKILL");
      await child.exited;
      process.kill(Number(readFileSync(held, "utf8")), "SIGKILL");
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
