import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { CronRuntime } from "../../src/cron/cron-runtime.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { buildLead, type LeadRuntime } from "../../src/app/lead.ts";
import { TeammateRuntime } from "../../src/team/teammate-runtime.ts";
import { MeteredModelClient } from "../../src/usage/metered-model.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// The Lead's runtime closes what it built in one order: the teammates (who may
// still publish events and start jobs), then cron (which publishes events), then
// the supervisor (which owns their jobs), then the model client they all call.
// The real components run; their close methods only note when they start and end.

const COMPONENTS = [
  [TeammateRuntime.prototype, "teammates"],
  [CronRuntime.prototype, "cron"],
  [JobSupervisor.prototype, "supervisor"],
  [MeteredModelClient.prototype, "model"],
] as const;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Notes each component's close as it starts and ends, in `log`, calling the real close in between. */
function recordCloses(log: string[]): void {
  for (const [prototype, name] of COMPONENTS) {
    const original = prototype.close;
    const recorded = async function (this: unknown) {
      log.push(`${name} closing`);
      try {
        await (original as (this: unknown) => Promise<void>).call(this);
      } finally {
        log.push(`${name} closed`);
      }
    };
    (prototype as { close: unknown }).close = recorded;
    cleanups.push(() => {
      (prototype as { close: unknown }).close = original;
    });
  }
}

const IN_ORDER = COMPONENTS.flatMap(([, name]) => [`${name} closing`, `${name} closed`]);

async function world(script: ScriptedReply[]) {
  const server = ScriptedModelServer.start(script);
  cleanups.push(() => server.close());
  const root = tempDir("agent-close-order-");
  const workspace = join(root, "ws");
  mkdirSync(workspace);
  const stateDir = join(root, "state");
  mkdirSync(stateDir);
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "sk-test" },
    workspace,
  });
  return { server, settings, stateDir, workspace };
}

describe("closing the Lead's runtime", () => {
  test("goes teammates, cron, supervisor, model client, each finished before the next begins, with a teammate mid-turn", async () => {
    let aliceAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      aliceAsked = resolve;
    });
    const w = await world([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "worker", prompt: "a long job" } }] },
      { identity: "lead", text: "spawned" },
      // Never answered before close: alice is mid-turn when the runtime closes.
      { identity: "alice", delayMs: 60_000, text: "too late", check: () => aliceAsked() },
    ]);
    const log: string[] = [];
    recordCloses(log);
    const lead: LeadRuntime = await buildLead(w.settings, { stateDir: w.stateDir, workspace: w.workspace });
    cleanups.push(() => lead.close().catch(() => {}));
    await lead.runner.run("start the long job", { idempotencyKey: uuidV7Source.next() });
    await asked;
    expect(log).toEqual([]);

    await lead.close();
    expect(log).toEqual(IN_ORDER);
    // The teammates' close did its real work: alice's task went back to ready/.
    expect(lead.team.list().map((t) => [t.name, t.state])).toEqual([["alice", "shutdown"]]);
    expect(readdirSync(join(w.stateDir, "mailboxes", "alice", "ready"))).toHaveLength(1);
  });

  test("goes in the same order when start-up fails half way (a corrupt team.json found while restoring the team)", async () => {
    const w = await world([]);
    writeFileSync(join(w.stateDir, "team.json"), "{ not json");
    const log: string[] = [];
    recordCloses(log);
    await expect(buildLead(w.settings, { stateDir: w.stateDir, workspace: w.workspace })).rejects.toThrow(/team\.json/);
    expect(log).toEqual(IN_ORDER);
    w.server.assertDone();
  });
});
