import { beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AgentResult, AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, message, setup } from "./fixture.ts";

// A state dir this user may read but not write (a read-only mount, another user's
// files). Root ignores file modes, so as root the binary runs as `nobody`.

beforeAll(() => {
  ensureBinary();
}, 120_000);

const asRoot = process.getuid?.() === 0;
const setpriv = Bun.which("setpriv");

function setWritable(path: string, writable: boolean): void {
  const stats = statSync(path);
  if (stats.isDirectory()) chmodSync(path, writable ? 0o755 : 0o555);
  else chmodSync(path, writable ? 0o644 : 0o444);
  if (stats.isDirectory()) for (const name of readdirSync(path)) setWritable(join(path, name), writable);
}

async function agentReadOnly(stateDir: string, ...args: string[]): Promise<AgentResult> {
  const drop = asRoot ? [setpriv!, "--reuid", "65534", "--regid", "65534", "--clear-groups"] : [];
  const child = Bun.spawn([...drop, AGENT_BINARY, ...args, "--state-dir", stateDir], {
    cwd: dirname(stateDir),
    env: { ...process.env, NO_COLOR: "1", HOME: dirname(stateDir) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * This user's session key where the child's HOME has it, owned by the uid the
 * child runs as: the state is the same user's on a read-only mount, not another
 * user's (whose sessions would be foreign, docs/sessions.md).
 */
function shareSessionKey(home: string): void {
  const dir = join(home, ".config", "agent");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(process.env.HOME!, ".config", "agent", "session-key"), join(dir, "session-key"));
  if (asRoot) for (const path of [join(home, ".config"), dir, join(dir, "session-key")]) chownSync(path, 65534, 65534);
}

describe.if(!asRoot || setpriv !== null)("a read-only state dir", () => {
  test("list and show work; send, recover and prune fail with one line, exit 5, and change nothing", async () => {
    const { root, stateDir, store } = setup();
    const waiting = message("alice", "still here");
    await store.send(waiting);
    shareSessionKey(dirname(root));
    setWritable(root, false);
    chmodSync(dirname(root), 0o755);
    try {
      const listed = await agentReadOnly(root, "mailbox", "list", "--json");
      expectOk(listed);
      expect(JSON.parse(listed.stdout).agents[0]).toMatchObject({ name: "alice", counts: { ready: 1 } });
      const shown = await agentReadOnly(root, "mailbox", "show", waiting.id, "--json");
      expectOk(shown);
      expect(JSON.parse(shown.stdout)).toMatchObject({ state: "ready", message: { content: "still here" } });

      for (const args of [
        ["mailbox", "send", "--to", "alice", "--from", "lead", "--content", "more"],
        ["mailbox", "recover"],
        ["mailbox", "prune", "--older-than", "1d"],
      ]) {
        expectError(await agentReadOnly(root, ...args), 5, /cannot write to .*state\/sessions\/[0-9a-f-]{36} \((EACCES|EROFS)\).*make it writable/);
      }
      expect(readdirSync(join(stateDir, "mailboxes", "alice", "ready"))).toEqual([`${waiting.id}.json`]);
    } finally {
      setWritable(root, true); // so the temp dir can be removed
    }
  });
});
