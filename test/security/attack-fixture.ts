import { afterEach, beforeAll } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { type AgentResult, ensureBinary, runAgent } from "../e2e/agent-binary.ts";
import { ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// A scripted model that attacks: each tool call is one reply, and the result
// the agent sent back for it is read from the next request.

export interface AttackCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface AttackOutcome extends AgentResult {
  /** The tool result the model got for each call, in order. */
  results: string[];
  server: ScriptedModelServer;
}

export interface AttackWorkspace {
  root: string;
  workspace: string;
  /** `agent run` in the workspace (state under `<workspace>/.agent`), with the given calls scripted. */
  attack(calls: AttackCall[], flags: string[], env?: Record<string, string | undefined>): Promise<AttackOutcome>;
}

export function attackSuite(): () => AttackWorkspace {
  const servers: ScriptedModelServer[] = [];
  beforeAll(() => {
    ensureBinary();
  }, 120_000);
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  return () => {
    const root = realpathSync(tempDir("agent-security-"));
    const workspace = join(root, "workspace");
    mkdirSync(workspace);
    const attack = async (calls: AttackCall[], flags: string[], env: Record<string, string | undefined> = {}) => {
      const script: ScriptedReply[] = [...calls.map((call) => ({ toolCalls: [call] })), { text: "attack over" }];
      const server = ScriptedModelServer.start(script);
      servers.push(server);
      const result = await runAgent(["run", "--base-url", server.url, "--workspace", workspace, ...flags, "attack"], {
        cwd: workspace,
        env: { OPENAI_API_KEY: "test-key-0123456789", AGENT_STATE_DIR: undefined, ...env },
      });
      const results = server.requests.slice(1, calls.length + 1).map((request) => String(request.body.messages.at(-1)?.content));
      return { ...result, results, server };
    };
    return { root, workspace, attack };
  };
}

/** Every regular file under `dir`, recursively, with its content. */
export function filesUnder(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  const visit = (path: string) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return;
    }
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stats.isFile()) out.push({ path, text: readFileSync(path, "latin1") });
  };
  visit(dir);
  return out;
}

/** Whether bubblewrap can make a sandbox here; the reason when not. */
export function sandboxProblem(): string | undefined {
  if (Bun.which("bwrap") === null) return "bubblewrap (bwrap) is not installed";
  const probe = Bun.spawnSync(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"], { stderr: "pipe" });
  if (probe.exitCode !== 0) return `bwrap cannot create a sandbox here: ${probe.stderr.toString().trim()}`;
  return undefined;
}
