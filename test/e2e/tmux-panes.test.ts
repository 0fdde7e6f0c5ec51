import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { deadline } from "../support/deadline.ts";

// `agent run --teammate-panes tmux` inside a real tmux server (a private
// socket, no user config): each teammate gets a pane following it, the panes
// show their tool calls, and they are gone when the run ends.

const startServer = scriptedServers();
const sockets: string[] = [];

afterEach(() => {
  for (const socket of sockets.splice(0)) {
    // The socket's path first: a server gone leaves its socket file behind in /tmp.
    const path = Bun.spawnSync(["tmux", "-L", socket, "display-message", "-p", "#{socket_path}"], { stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
    Bun.spawnSync(["tmux", "-L", socket, "kill-server"], { stdout: "ignore", stderr: "ignore" });
    if (path !== "") rmSync(path, { force: true });
  }
});

function tmux(socket: string, ...args: string[]): string {
  const result = Bun.spawnSync(["tmux", "-L", socket, ...args], { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/** Each pane of the window: its id and the command it was started with. */
function panes(socket: string): { id: string; command: string }[] {
  return tmux(socket, "list-panes", "-F", "#{pane_id}\t#{pane_start_command}")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id, command] = line.split("\t");
      return { id: id!, command: command ?? "" };
    });
}

async function until<T>(what: () => T | undefined, label: () => string, ms = 20_000): Promise<T> {
  const end = Date.now() + deadline(ms);
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out: ${label()}`);
    await Bun.sleep(50);
  }
}

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

describe("agent run --teammate-panes tmux", () => {
  // tmux is a prerequisite of this test only: `npm run test:all` installs it; missing, one line says so.
  const hasTmux = Bun.spawnSync(["sh", "-c", "command -v tmux"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  const withTmux = requirePrerequisite("tmux", hasTmux ? undefined : "tmux is not installed") ? test : test.skip;
  withTmux("two teammates get a pane each, showing their tool calls; the panes close when the run ends", async () => {
    const seen = Promise.withResolvers<void>();
    const captured = Promise.withResolvers<void>();
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [
          { name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } },
          { name: "spawn_teammate", arguments: { name: "bob", role: "tester", prompt: "write b.txt" } },
        ],
      },
      // The Lead's own turn (and so the run, and its panes) lasts until the test has read the panes
      // and both results wait for the Lead: they are then answered in one event turn, whatever the timing.
      { identity: "lead", text: "the team is on it.", gate: captured.promise },
      // Held until both panes are up: what the panes show is printed as it happens.
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "from alice\n" } }], gate: seen.promise },
      { identity: "alice", text: "alice wrote a.txt" },
      { identity: "bob", toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "from bob\n" } }], gate: seen.promise },
      { identity: "bob", text: "bob wrote b.txt" },
      { identity: "lead", text: "both reported." },
    ]);
    const setup = teamSetup();
    const socket = `agent-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    sockets.push(socket);
    const exitFile = join(setup.root, "exit-code");
    const run = [AGENT_BINARY, "run", "have alice and bob write", "--teammate-panes", "tmux", "--permission-mode", "acceptEdits"];
    run.push("--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url);
    // The main pane stays after the run, so the window's panes can be counted then.
    const line = `${run.map(quote).join(" ")}; echo $? > ${quote(exitFile)}; sleep 60`;
    const env = { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" };
    const started = Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", "-c", setup.workspace, line], {
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(started.exitCode).toBe(0);
    const [main] = panes(socket);

    const teammates = await until(
      () => {
        const now = panes(socket);
        return now.length === 3 ? now.slice(1) : undefined;
      },
      () => `${JSON.stringify(panes(socket))}\n${tmux(socket, "capture-pane", "-p", "-t", main!.id)}`,
    );
    const paneOf = (name: string) => teammates.find((pane) => pane.command.includes(`'--agent' '${name}'`))!;
    expect(paneOf("alice").command).toContain("'sessions' 'show'");
    expect(paneOf("bob").command).toContain("'--follow'");
    seen.resolve();

    const screen = (id: string) => tmux(socket, "capture-pane", "-p", "-J", "-t", id);
    for (const [name, file] of [
      ["alice", "a.txt"],
      ["bob", "b.txt"],
    ] as const) {
      const shown = await until(
        () => {
          const text = screen(paneOf(name).id);
          return text.includes(`← write_file ok`) ? text : undefined;
        },
        () => `${name}'s pane:\n${screen(paneOf(name).id)}`,
      );
      expect(shown).toContain(`agent: following ${name} in session`);
      expect(shown).toMatch(new RegExp(`→ write_file \\{"path":"${file.replace(".", "\\.")}"`));
    }
    // Both results are in the Lead's mailbox (waiting, or taken into its inbox) before its turn ends.
    const leadMail = join(new SessionStore(setup.stateDir).dirOf(new SessionStore(setup.stateDir).mostRecent()!.id), "mailboxes", "lead");
    const waiting = () => ["ready", "processing"].flatMap((state) => (existsSync(join(leadMail, state)) ? readdirSync(join(leadMail, state)) : [])).length;
    await until(() => (waiting() >= 2 ? true : undefined), () => `${waiting()} message(s) for the Lead`);
    captured.resolve();

    // The shell creates the file before `echo` writes to it: wait for its line.
    const exitCode = await until(
      () => (existsSync(exitFile) && readFileSync(exitFile, "utf8").endsWith("\n") ? readFileSync(exitFile, "utf8").trim() : undefined),
      () => tmux(socket, "capture-pane", "-p", "-t", main!.id),
      30_000,
    );
    expect(exitCode).toBe("0");
    server.assertDone();
    // Only the run's own pane is left: both teammate panes were killed by their ids.
    expect(panes(socket).map((pane) => pane.id)).toEqual([main!.id]);
  }, 60_000);

  test("outside tmux: one line says panes need tmux, and the run goes on", async () => {
    const server = startServer([{ identity: "lead", text: "done without panes." }]);
    const setup = teamSetup();
    const result = await setup.run(["hello", "--teammate-panes", "tmux", "--base-url", server.url], { env: { TMUX: undefined, TMUX_PANE: undefined } });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("done without panes.\n");
    const lines = result.stderr.split("\n").filter((text) => text.includes("tmux"));
    expect(lines).toEqual(["agent: warning: --teammate-panes tmux needs to run inside tmux ($TMUX is not set): teammates get no panes"]);
    server.assertDone();
  }, 30_000);
});
