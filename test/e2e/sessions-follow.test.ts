import { describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { clusterForFile } from "../support/postgres.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { deadline } from "../support/deadline.ts";

// `agent sessions show ID --follow --agent NAME`: a read-only follower of one
// agent's history and mailbox, run beside a live `agent run` as a user would
// in another terminal (or a tmux pane).

const startServer = scriptedServers();
const pg = clusterForFile(ensureBinary);

/** The Lead spawns alice, whose write is held at `gate` until the test releases it. */
function aliceWrites(gate: Promise<void>, asked: () => void) {
  return startServer([
    { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }] },
    { identity: "lead", text: "alice is on it." },
    { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "from alice\n" } }], gate, check: asked },
    { identity: "alice", text: "alice wrote a.txt" },
    { identity: "lead", text: "alice reported." },
  ]);
}

/** Every file under `dir` with its size and modification time: what a read-only command must leave as it was. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const visit = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stats = statSync(full);
      if (stats.isDirectory()) visit(full);
      else out.push(`${full} ${stats.size} ${stats.mtimeMs}`);
    }
    out.push(`${path}/ ${statSync(path).mtimeMs}`);
  };
  visit(dir);
  return out.sort();
}

async function readUntil(stream: ReadableStream<Uint8Array>, into: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) into.text += decoder.decode(chunk, { stream: true });
}

async function waitFor(what: () => boolean, label: () => string, ms = 15_000): Promise<void> {
  const end = Date.now() + deadline(ms);
  while (!what()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${label()}`);
    await Bun.sleep(20);
  }
}

describe.each(["files", "postgres"])("agent sessions show --follow, %s store", (kind) => {
  test("follows alice while the run goes on: her task, tool call, result and answer as they come; exits 0 once the run is over", async () => {
    const gate = Promise.withResolvers<void>();
    const asked = Promise.withResolvers<void>();
    const server = aliceWrites(gate.promise, () => asked.resolve());
    const setup = teamSetup();
    const store = kind === "postgres" ? ["--store", await pg().database()] : [];
    const run = setup.run(["have alice write a.txt", "--permission-mode", "acceptEdits", "--base-url", server.url, ...store]);
    await asked.promise;
    const id = new SessionStore(setup.stateDir).mostRecent()!.id;
    const follower = Bun.spawn([AGENT_BINARY, "sessions", "show", id, "--follow", "--agent", "alice", "--state-dir", setup.stateDir, ...store], {
      env: { ...process.env, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = { text: "" };
    const err = { text: "" };
    const reading = Promise.all([readUntil(follower.stdout, out), readUntil(follower.stderr, err)]);
    // What she did before the follower started: her task, and its message still being worked on.
    await waitFor(() => out.text.includes("> write a.txt"), () => out.text + err.text);
    expect(out.text).toMatch(/✉ new task from lead/);
    // Nothing of the held write yet (its model answer is held, so no record of it exists): it is printed when it happens.
    expect(out.text).not.toContain("write_file");
    // Ctrl-C (SIGINT) stops a follower with 0, the run untouched.
    const second = Bun.spawn([AGENT_BINARY, "sessions", "show", id, "--follow", "--state-dir", setup.stateDir, ...store], { stdout: "pipe", stderr: "pipe" });
    const secondErr = { text: "" };
    const secondReading = readUntil(second.stderr, secondErr);
    await waitFor(() => secondErr.text.includes("(Ctrl-C to stop)"), () => secondErr.text);
    second.kill("SIGINT");
    expect(await second.exited).toBe(0);
    await secondReading;
    gate.resolve();
    // The answer and the turn's end are two records, the follower polls: wait for the last one.
    await waitFor(() => out.text.includes("alice: alice wrote a.txt") && out.text.includes("turn finished"), () => out.text + err.text);
    expect(out.text).toMatch(/\d\d:\d\d:\d\d → write_file \{"path":"a.txt","content":"from alice\\n"\}/);
    expect(out.text).toMatch(/← write_file ok: /);
    expect(out.text).toMatch(/— turn finished \(success\)/);
    const result = await run;
    expect(result.code).toBe(0);
    server.assertDone();
    // The run is over and everything it wrote was printed: the follower stops by itself.
    expect(await follower.exited).toBe(0);
    await reading;
    expect(err.text).toContain(`agent: following alice in session ${id}`);
    expect(err.text).toContain(`session ${id} is not running: nothing more will come`);
    // Each line once, in the order she did them.
    const order = ["> write a.txt", "→ write_file", "← write_file ok", "alice: alice wrote a.txt"].map((part) => out.text.indexOf(part));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(out.text.split("→ write_file").length).toBe(2);

    // Afterwards, on the stopped session: read once, exit 0 at once, nothing changed on disk.
    const dir = new SessionStore(setup.stateDir).dirOf(id);
    const before = snapshot(dir);
    const again = await runAgent(["sessions", "show", id, "--follow", "--agent", "alice", "--state-dir", setup.stateDir, ...store]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("→ write_file");
    expect(again.stdout).toContain("alice: alice wrote a.txt");
    expect(snapshot(dir)).toEqual(before);
    // The Lead by default; --json gives the timeline's entries a line each.
    const lead = await runAgent(["sessions", "show", id, "--follow", "--json", "--state-dir", setup.stateDir, ...store]);
    expect(lead.code).toBe(0);
    const entries = lead.stdout.trim().split("\n").map((line) => JSON.parse(line) as { agent: string; kind: string; text: string });
    expect(entries.every((entry) => entry.agent === "lead")).toBe(true);
    expect(entries.find((entry) => entry.kind === "tool_call")?.text).toStartWith("spawn_teammate ");
    expect(entries.some((entry) => entry.kind === "assistant" && entry.text === "alice reported.")).toBe(true);
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);
});

describe("agent sessions show --follow before the teammate exists", () => {
  test("in a running session, a follower of a teammate not spawned yet says so and waits; she is followed once she comes", async () => {
    const spawnGate = Promise.withResolvers<void>();
    const leadAsked = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }], gate: spawnGate.promise, check: () => leadAsked.resolve() },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "from alice\n" } }] },
      { identity: "alice", text: "alice wrote a.txt" },
      { identity: "lead", text: "alice reported." },
    ]);
    const setup = teamSetup();
    const run = setup.run(["have alice write a.txt", "--permission-mode", "acceptEdits", "--base-url", server.url]);
    await leadAsked.promise;
    const id = new SessionStore(setup.stateDir).mostRecent()!.id;
    const follower = Bun.spawn([AGENT_BINARY, "sessions", "show", id, "--follow", "--agent", "alice", "--state-dir", setup.stateDir], {
      env: { ...process.env, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = { text: "" };
    const err = { text: "" };
    const reading = Promise.all([readUntil(follower.stdout, out), readUntil(follower.stderr, err)]);
    await waitFor(() => err.text.includes(`agent: alice is not in session ${id} yet (it has lead); waiting for it while the session runs`), () => err.text);
    spawnGate.resolve();
    expect((await run).code).toBe(0);
    server.assertDone();
    expect(await follower.exited).toBe(0);
    await reading;
    expect(out.text).toContain("> write a.txt");
    expect(out.text).toContain("alice: alice wrote a.txt");
    expect(err.text).toContain(`agent: following alice in session ${id}`);
  }, 60_000);
});

describe("agent sessions show --follow, refusals", () => {
  test("an agent the session does not have is refused at once, naming the ones it has; --agent needs --follow", async () => {
    const server = startServer([{ identity: "lead", text: "hello." }]);
    const setup = teamSetup();
    expect((await setup.run(["hi", "--base-url", server.url])).code).toBe(0);
    server.assertDone();
    const id = new SessionStore(setup.stateDir).mostRecent()!.id;
    const unknown = await runAgent(["sessions", "show", id, "--follow", "--agent", "bob", "--state-dir", setup.stateDir]);
    expect(unknown.code).toBe(6);
    expect(unknown.stderr).toMatch(/unknown agent "bob": session \S+ has no such agent \(it has lead\)/);
    const alone = await runAgent(["sessions", "show", id, "--agent", "bob", "--state-dir", setup.stateDir]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--agent goes with --follow");
  }, 30_000);
});
