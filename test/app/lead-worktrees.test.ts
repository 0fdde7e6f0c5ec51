import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type LeadRuntime, buildLead } from "../../src/app/lead.ts";
import { runUntilQuiet } from "../../src/app/until-quiet.ts";
import { loadSettings } from "../../src/config/load.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import type { RunEvent } from "../../src/runtime/run-types.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { git } from "../../src/worktrees/git.ts";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// The runtime side of worktree isolation, in-process with real git: the config
// default, the warning outside git, and a restore whose branch is gone.

const open: { server: ScriptedModelServer; lead?: LeadRuntime }[] = [];
afterEach(async () => {
  for (const { server, lead } of open.splice(0)) {
    await lead?.close().catch(() => {});
    await server.close();
  }
});

async function run(cwd: string, ...args: string[]): Promise<string> {
  const result = await git(cwd, args);
  if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.trim();
}

async function workspaceWith(options: { git: boolean; isolation?: "worktree" }): Promise<{ workspace: string; stateDir: string }> {
  const root = realpathSync(tempDir("agent-lead-worktrees-"));
  const workspace = join(root, "ws");
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  if (options.isolation) writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ team: { isolation: options.isolation } }));
  if (options.git) {
    await run(workspace, "init", "--quiet", "--initial-branch=main");
    await run(workspace, "config", "user.name", "Test User");
    await run(workspace, "config", "user.email", "test@example.invalid");
    writeFileSync(join(workspace, "a.txt"), "a\n");
    await run(workspace, "add", "a.txt");
    await run(workspace, "commit", "--quiet", "-m", "start");
  }
  return { workspace, stateDir: join(root, "state", "s1") };
}

async function lead(script: ScriptedReply[], where: { workspace: string; stateDir: string }) {
  const server = ScriptedModelServer.start(script);
  const entry: { server: ScriptedModelServer; lead?: LeadRuntime } = { server };
  open.push(entry);
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "acceptEdits" },
    env: { OPENAI_API_KEY: "sk-test", XDG_CONFIG_HOME: join(where.workspace, "..", "no-user-config") },
    workspace: where.workspace,
  });
  const events: RunEvent[] = [];
  entry.lead = await buildLead(settings, { ...where, observer: (e) => events.push(e) });
  return { server, lead: entry.lead, events };
}

const key = () => uuidV7Source.next();

describe("worktree isolation in the Lead's runtime", () => {
  test('config team.isolation "worktree" isolates a plain spawn; the teammate writes only in its worktree', async () => {
    const where = await workspaceWith({ git: true, isolation: "worktree" });
    const w = await lead(
      [
        { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Write b.txt." } }] },
        { identity: "lead", text: "spawned" },
        { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "b\n" } }] },
        { identity: "alice", text: "wrote b.txt" },
        { identity: "lead", text: "noted" },
      ],
      where,
    );
    await w.lead.runner.run("go", { idempotencyKey: key() });
    await runUntilQuiet(w.lead);
    w.server.assertDone();
    const [alice] = await new FileTeamRegistry(where.stateDir).read();
    expect(alice!.worktree!.branch).toBe("agent/s1/alice");
    expect(readFileSync(join(alice!.worktree!.path, "b.txt"), "utf8")).toBe("b\n");
    expect(existsSync(join(where.workspace, "b.txt"))).toBe(false);
    expect(await run(where.workspace, "show", "agent/s1/alice:b.txt")).toBe("b");
  });

  test("outside git a configured worktree default is ignored with one warning, and merge_teammate is not offered", async () => {
    const where = await workspaceWith({ git: false, isolation: "worktree" });
    const w = await lead(
      [
        {
          identity: "lead",
          text: "nothing to do",
          check: (r) => expect((r.body.tools ?? []).map((tool) => tool.function.name)).not.toContain("merge_teammate"),
        },
      ],
      where,
    );
    await w.lead.runner.run("go", { idempotencyKey: key() });
    w.server.assertDone();
    const warnings = w.events.filter((e) => e.type === "warning").map((e) => (e as { message: string }).message);
    expect(warnings).toEqual([expect.stringContaining('config team.isolation "worktree" is ignored')]);
  });

  test("a restored teammate whose worktree and branch are gone is failed with the reason, and its name can be spawned again", async () => {
    const where = await workspaceWith({ git: true });
    const first = await lead(
      [
        {
          identity: "lead",
          toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Say hi.", isolation: "worktree" } }],
        },
        { identity: "lead", text: "spawned" },
        { identity: "alice", text: "hi" },
        { identity: "lead", text: "noted" },
      ],
      where,
    );
    await first.lead.runner.run("go", { idempotencyKey: key() });
    await runUntilQuiet(first.lead);
    first.server.assertDone();
    await first.lead.close();
    const [alice] = await new FileTeamRegistry(where.stateDir).read();
    rmSync(alice!.worktree!.path, { recursive: true, force: true });
    await run(where.workspace, "worktree", "prune");
    await run(where.workspace, "branch", "-D", alice!.worktree!.branch);

    const second = await lead(
      [
        {
          identity: "lead",
          toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "Say hi again.", isolation: "worktree" } }],
        },
        {
          identity: "lead",
          text: "respawned",
          check: (r) => expect(String(r.body.messages.at(-1)?.content)).toContain("replaced the failed teammate alice"),
        },
        { identity: "alice", text: "hi again" },
        { identity: "lead", text: "noted" },
      ],
      where,
    );
    const restored = second.lead.team.list().find((t) => t.name === "alice")!;
    expect(restored.state).toBe("failed");
    expect(restored.failure).toContain("its worktree could not be restored");
    expect(restored.failure).toContain("spawn the teammate again");
    await second.lead.runner.run("go again", { idempotencyKey: key() });
    await runUntilQuiet(second.lead);
    second.server.assertDone();
    expect(existsSync(join(alice!.worktree!.path, ".git"))).toBe(true);
  });
});
