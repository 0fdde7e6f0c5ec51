import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { splitRecordedFlags } from "../../src/cli/drain-flags.ts";
import { runAgent } from "../e2e/agent-binary.ts";
import { scriptedServers } from "../e2e/run-fixture.ts";
import type { ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// A session's recorded run flags are sealed with the user's key, but a seal says
// who wrote the record, not that this command line agrees to it: a plain
// `agent drain` never runs looser than its own line and the user's config. With
// the key in hand (the audit read it from a sandboxed shell) a repository could
// otherwise ship a session whose flags say bypassPermissions and no sandbox.

const startServer = scriptedServers();

function world() {
  const root = realpathSync(tempDir("agent-drain-widening-"));
  const workspace = join(root, "workspace");
  const home = join(root, "home");
  mkdirSync(workspace);
  mkdirSync(home);
  const env = { HOME: home, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined, AGENT_STATE_DIR: undefined, AGENT_TRUST_PROJECT: undefined, OPENAI_API_KEY: "test-key-0123456789" };
  const server = startServer([]);
  /** The binary in the workspace, the model answering with `script`. */
  const agent = (args: string[], script: ScriptedReply[]) => {
    server.push(...script);
    return runAgent([...args, "--base-url", server.url], { cwd: workspace, env });
  };
  const send = (content: string) => runAgent(["mailbox", "send", "--to", "lead", "--from", "alice", "--content", content], { cwd: workspace, env });
  return { root, server, agent, send };
}

/** The Lead's event turn: a shell command that writes outside the workspace, which only an unsandboxed bypassPermissions run can do. */
const touchOutside = (marker: string): ScriptedReply[] => [{ toolCalls: [{ name: "shell", arguments: { command: `touch ${marker}` } }] }, { text: "done" }];

describe("agent drain and a session's recorded widening flags", () => {
  test("a plain drain names them and does not take them; given again on drain's line, they apply", async () => {
    const { root, server, agent, send } = world();
    const widened = ["--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access", "--trust-project", "--allow", "shell(touch*)"];
    const first = await agent(["run", ...widened, "hi"], [{ text: "hello" }]);
    expect(first.code).toBe(0);

    expect((await send("touch the marker")).code).toBe(0);
    const marker = join(root, "outside-marker");
    const plain = await agent(["drain"], touchOutside(marker));
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(
      /agent: warning: session [0-9a-f-]{36}: its last run was given --permission-mode bypassPermissions --allow 'shell\(touch\*\)' --sandbox danger-full-access --trust-project, wider than this command line and your config allow; not taken: pass .* to agent drain to drain with them\n/,
    );
    expect(plain.stderr).not.toContain("draining with its last run's permissions");
    expect(server.requests.at(-1)!.body.messages.at(-1)?.content).toMatch(/permission denied/);
    expect(existsSync(marker)).toBe(false);

    // Positive control: the same flags on drain's own line do what the record could not.
    expect((await send("touch the marker again")).code).toBe(0);
    const given = await agent(["drain", ...widened], touchOutside(marker));
    expect(given.code).toBe(0);
    expect(given.stderr).not.toContain("not taken");
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  test("what narrows is still taken: a recorded deny rule and a stricter mode", async () => {
    const { root, agent, send } = world();
    expect((await agent(["run", "--permission-mode", "plan", "--deny", "shell(touch*)", "hi"], [{ text: "hello" }])).code).toBe(0);
    expect((await send("touch the marker")).code).toBe(0);
    const drained = await agent(["drain"], touchOutside(join(root, "outside-marker")));
    expect(drained.code).toBe(0);
    expect(drained.stderr).toMatch(/draining with its last run's permissions: --permission-mode plan --deny 'shell\(touch\*\)'\n/);
    expect(drained.stderr).not.toContain("not taken");
  }, 60_000);
});

test("splitRecordedFlags: looser than drain's own line and config is widening; no looser, or already given by config, is taken", () => {
  const baseline = { permissionMode: "acceptEdits" as const, allow: ["shell(npm test*)"], trusted: true };
  const recorded = {
    permissionMode: "acceptEdits" as const,
    sandbox: "danger-full-access" as const,
    trustProject: true as const,
    allow: ["shell(npm test*)", "write_file(.git/config)"],
    deny: ["shell(rm*)"],
    addDirs: ["/srv/shared"],
  };
  expect(splitRecordedFlags(recorded, baseline)).toEqual({
    taken: { permissionMode: "acceptEdits", allow: ["shell(npm test*)"], deny: ["shell(rm*)"], addDirs: ["/srv/shared"] },
    widening: { sandbox: "danger-full-access", allow: ["write_file(.git/config)"] },
  });
  // The user's own config asking for no sandbox: the record widens nothing there; an untrusted project's trust it would.
  expect(splitRecordedFlags({ sandbox: "danger-full-access", trustProject: true }, { ...baseline, sandbox: "danger-full-access", trusted: false })).toEqual({
    taken: { sandbox: "danger-full-access" },
    widening: { trustProject: true },
  });
  expect(splitRecordedFlags({ permissionMode: "bypassPermissions", sandbox: "read-only" }, { ...baseline, permissionMode: "default" })).toEqual({
    taken: { sandbox: "read-only" },
    widening: { permissionMode: "bypassPermissions" },
  });
});
