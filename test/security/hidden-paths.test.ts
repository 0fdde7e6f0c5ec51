import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { attackSuite, filesUnder, sandboxProblem } from "./attack-fixture.ts";

// The sandbox cannot see who the user is: the session key (with which a
// repository's session passes as the user's own), the trust store, every
// agent's state and the credentials files of common tools read as nothing from
// a sandboxed shell, while the rest of the home directory stays readable.

const setup = attackSuite();

/**
 * A home directory outside /tmp: the sandbox's /tmp is private, so a home under
 * it would be unreadable whatever the hidden paths, and the test would prove nothing.
 */
function homeOutsideTmp(): string {
  const home = mkdtempSync("/var/tmp/agent-hidden-home-");
  made.push(home);
  return home;
}
const made: string[] = [];
process.on("exit", () => {
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

const PGPASS = "db.example:5432:*:alice:pg-secret-3141";
const NETRC = "machine api.example login alice password netrc-secret-2718";

describe("what the sandbox hides", () => {
  const sandboxTest = requirePrerequisite("bubblewrap", sandboxProblem()) ? test : test.skip;

  sandboxTest("the session key, trust store, state root and credentials files read as nothing in a sandboxed shell; the rest of home does", async () => {
    const { workspace, attack } = setup();
    const home = homeOutsideTmp();
    const env = { HOME: home, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined, XDG_RUNTIME_DIR: undefined };
    writeFileSync(join(home, ".pgpass"), `${PGPASS}\n`, { mode: 0o600 });
    writeFileSync(join(home, ".netrc"), `${NETRC}\n`, { mode: 0o600 });
    mkdirSync(join(home, ".ssh"));
    writeFileSync(join(home, ".ssh", "id_ed25519"), "ssh-secret-1618\n", { mode: 0o600 });
    writeFileSync(join(home, "notes.txt"), "plain-notes-visible\n");
    writeFileSync(join(home, "diary.txt"), "diary-secret-1414\n");
    // The user's own list: one more file hidden by config.
    mkdirSync(join(home, ".config", "agent"), { recursive: true });
    // A hook of the user's kept in the hidden directory still runs: what a hook names is bound back, read-only.
    mkdirSync(join(home, ".config", "agent", "hooks"));
    writeFileSync(join(home, ".config", "agent", "hooks", "stop.sh"), "echo hook-ran > hook-ran.txt\n");
    const hooks = { Stop: [{ command: "sh ~/.config/agent/hooks/stop.sh" }] };
    writeFileSync(join(home, ".config", "agent", "config.json"), JSON.stringify({ sandbox: { hiddenPaths: ["~/diary.txt"] }, hooks }));
    writeFileSync(join(home, ".config", "agent", "trust.json"), JSON.stringify({ version: 1, projects: {} }));

    // A first run makes the session key and a history under the state root.
    const first = await attack([{ name: "shell", arguments: { command: "echo first" } }], ["--permission-mode", "bypassPermissions", "--output", "json"], env);
    expect(first.code).toBe(0);
    const key = readFileSync(join(home, ".config", "agent", "session-key"), "utf8").trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const stateDir = JSON.parse(first.stdout).state_dir as string;
    const history = filesUnder(stateDir).find((file) => file.path.endsWith("lead.jsonl"));
    expect(history).toBeDefined();

    const reads = [
      `cat ${home}/.config/agent/session-key`,
      `cat ${home}/.config/agent/trust.json; cat ${home}/.config/agent/config.json`,
      `cat ${home}/.pgpass; cat ${home}/.netrc`,
      `cat ${home}/.ssh/id_ed25519; echo "keys listed: $(ls -A ${home}/.ssh 2>&1 | grep -c id_)"`,
      `cat ${JSON.stringify(history!.path)}`,
      `cat ${home}/diary.txt`,
      // Positive controls: the rest of home and the workspace are there.
      `cat ${home}/notes.txt`,
      "echo workspace-ok > w.txt && cat w.txt",
    ];
    const run = await attack(
      reads.map((command) => ({ name: "shell", arguments: { command } })),
      ["--permission-mode", "bypassPermissions"],
      env,
    );
    expect(run.code).toBe(0);
    const [sessionKey, trust, credentials, ssh, state, diary, notes, own] = run.results;
    expect(sessionKey).not.toContain(key);
    expect(trust).not.toContain("projects");
    expect(trust).not.toContain("hiddenPaths");
    expect(credentials).not.toContain("pg-secret-3141");
    expect(credentials).not.toContain("netrc-secret-2718");
    expect(ssh).not.toContain("ssh-secret-1618");
    expect(ssh).toContain("keys listed: 0");
    expect(state).not.toContain("echo first");
    expect(diary).not.toContain("diary-secret-1414");
    expect(notes).toContain("plain-notes-visible");
    expect(own).toContain("workspace-ok");
    expect(readFileSync(join(workspace, "hook-ran.txt"), "utf8")).toBe("hook-ran\n");
    // The host's files are untouched: hidden is not emptied.
    expect(readFileSync(join(home, ".pgpass"), "utf8")).toBe(`${PGPASS}\n`);
    expect(readFileSync(join(home, ".config", "agent", "session-key"), "utf8").trim()).toBe(key);
  });
});
