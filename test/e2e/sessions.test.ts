import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SessionMarker } from "../../src/sessions/session-marker.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { z } from "zod";
import type { RecordedRequest } from "../support/model-server.ts";
import { AGENT_BINARY, runAgent } from "./agent-binary.ts";
import { expectOneLineError, parseResult, runSetup, scriptedServers } from "./run-fixture.ts";
import { deadline } from "../support/deadline.ts";

// Sessions on the compiled binary: every run a new session, -c / --resume /
// --session to continue one, one runtime per session and several sessions at
// once, `agent sessions list|rm`.

const startServer = scriptedServers();

/** Everything the model was sent in a request, as one string: where an earlier prompt would show. */
const sent = (request: RecordedRequest | undefined) => JSON.stringify(request?.body.messages ?? []);

const SessionList = z.strictObject({
  sessions: z.array(
    z.strictObject({
      session_id: z.uuid(),
      short_id: z.string().regex(/^[0-9a-f]{8,12}$/),
      name: z.string().nullable(),
      created_at_utc: z.iso.datetime(),
      last_used_at_utc: z.iso.datetime(),
      first_prompt: z.string().nullable(),
      state: z.enum(["idle", "running", "pending"]),
      pid: z.number().int().optional(),
      host: z.string().optional(),
      pending_work: z.string().optional(),
    }),
  ),
});

function sessionsSetup() {
  const base = runSetup();
  const agent = (...args: string[]) => runAgent([...args, "--state-dir", base.stateDir]);
  const list = async () => {
    const listed = await agent("sessions", "list", "--json");
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: "" });
    return SessionList.parse(JSON.parse(listed.stdout)).sessions;
  };
  /** `agent run` as a child that is still running: for a second process to meet. */
  const spawnRun = (args: string[]) =>
    Bun.spawn([AGENT_BINARY, "run", ...args, "--output", "json", "--workspace", base.workspace, "--state-dir", base.stateDir], {
      env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  return { ...base, agent, list, spawnRun };
}

async function until(condition: () => boolean): Promise<void> {
  for (const end = Date.now() + deadline(20_000); !condition(); await Bun.sleep(20)) {
    if (Date.now() > end) throw new Error("timed out waiting");
  }
}

describe("choosing the session", () => {
  test("two runs in a row are independent; -c continues the latest; --resume a prefix; --session NAME twice continues", async () => {
    const server = startServer([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }, { text: "five" }, { text: "six" }]);
    const { run, list } = sessionsSetup();
    const first = parseResult((await run(["remember the word apple", "--output", "json", "--base-url", server.url])).stdout);
    const second = parseResult((await run(["what is 2+2", "--output", "json", "--base-url", server.url])).stdout);
    expect(second.session_id).not.toBe(first.session_id);
    expect(sent(server.requests[1])).not.toContain("apple");
    expect(sent(server.requests[1])).not.toContain('"one"');

    const third = parseResult((await run(["-c", "and 3+3", "--output", "json", "--base-url", server.url])).stdout);
    expect(third.session_id).toBe(second.session_id);
    expect(sent(server.requests[2])).toContain("what is 2+2");
    expect(sent(server.requests[2])).not.toContain("apple");

    const prefix = first.session_id.slice(0, 30);
    const fourth = parseResult((await run(["--resume", prefix, "which word?", "--output", "json", "--base-url", server.url])).stdout);
    expect(fourth.session_id).toBe(first.session_id);
    expect(sent(server.requests[3])).toContain("remember the word apple");
    expect(sent(server.requests[3])).not.toContain("2+2");

    const named = parseResult((await run(["--session", "ci-42", "note the code 4711", "--output", "json", "--base-url", server.url])).stdout);
    const again = parseResult((await run(["--session", "ci-42", "which code?", "--output", "json", "--base-url", server.url])).stdout);
    expect(again.session_id).toBe(named.session_id);
    expect(sent(server.requests[5])).toContain("note the code 4711");
    expect(sent(server.requests[5])).not.toContain("apple");
    server.assertDone();

    const sessions = await list();
    expect(sessions.map((s) => [s.session_id, s.name, s.first_prompt, s.state])).toEqual([
      [named.session_id, "ci-42", "note the code 4711", "idle"],
      [first.session_id, null, "remember the word apple", "idle"],
      [second.session_id, null, "what is 2+2", "idle"],
    ]);
  }, 60_000);

  test("short ids: the list shows each session's random tail, and --resume, sessions show and --session take it", async () => {
    const server = startServer([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const { run, list, agent } = sessionsSetup();
    const first = parseResult((await run(["remember the word apple", "--output", "json", "--base-url", server.url])).stdout);
    const second = parseResult((await run(["what is 2+2", "--output", "json", "--base-url", server.url])).stdout);
    const sessions = await list();
    expect(sessions.map((s) => [s.session_id, s.short_id])).toEqual([
      [second.session_id, second.session_id.slice(-8)],
      [first.session_id, first.session_id.slice(-8)],
    ]);
    const text = await agent("sessions", "list");
    expect(text.stdout.split("\n").slice(1, 3).map((line) => line.split(/ +/)[0])).toEqual([second.session_id.slice(-8), first.session_id.slice(-8)]);

    const short = first.session_id.slice(-8);
    const resumed = parseResult((await run(["--resume", short, "which word?", "--output", "json", "--base-url", server.url])).stdout);
    expect(resumed.session_id).toBe(first.session_id);
    expect(sent(server.requests[2])).toContain("remember the word apple");
    const shown = await agent("sessions", "show", short.toUpperCase(), "--json");
    expect({ code: shown.code, id: JSON.parse(shown.stdout).session_id }).toEqual({ code: 0, id: first.session_id });
    // The full id and a prefix of it still name it.
    expect((await agent("sessions", "show", first.session_id, "--json")).code).toBe(0);
    expect(JSON.parse((await agent("team", "list", "--session", short, "--json")).stdout).session_id).toBe(first.session_id);
    server.assertDone();
  }, 60_000);

  test("an unknown session is exit 6, a shared prefix exit 2 listing the candidates, two choices exit 2; nothing is sent", async () => {
    const server = startServer([{ text: "a" }, { text: "b" }]);
    const { run, stateDir } = sessionsSetup();
    expectOneLineError(await run(["-c", "hi", "--base-url", server.url]), 6, /no session in .* yet; start one with `agent run PROMPT`/);
    expect(existsSync(join(stateDir, "sessions"))).toBe(false);
    // A run that cannot start (no API key) leaves no empty session behind.
    expectOneLineError(await run(["hi", "--base-url", server.url], { env: { OPENAI_API_KEY: undefined } }), 3, /no API key/);
    expect(readdirSync(join(stateDir, "sessions"))).toEqual([]);
    const a = parseResult((await run(["hi", "--output", "json", "--base-url", server.url])).stdout);
    const b = parseResult((await run(["hi", "--output", "json", "--base-url", server.url])).stdout);
    expectOneLineError(await run(["--resume", "ffffffff", "hi", "--base-url", server.url]), 6, /no session "ffffffff" in .*agent sessions list/);
    const ambiguous = await run(["--resume", "0", "hi", "--base-url", server.url]);
    expectOneLineError(ambiguous, 2, /session id "0" matches 2 sessions/);
    for (const id of [a.session_id, b.session_id]) expect(ambiguous.stderr).toContain(id);
    expectOneLineError(await run(["-c", "--session", "x", "hi", "--base-url", server.url]), 2, /--continue and --session each choose the session/);
    expectOneLineError(await run(["--session", "no/slash", "hi", "--base-url", server.url]), 2, /invalid session name "no\/slash"/);
    server.assertDone();
  }, 30_000);
});

describe("a session whose session.json is corrupt", () => {
  test("hides only itself: sessions list names it on stderr and lists the rest, -c continues the latest readable one, sessions show of it says what is wrong", async () => {
    const { run, agent, stateDir } = sessionsSetup();
    const server = startServer([{ text: "first" }, { text: "second" }, { text: "continued" }]);
    const first = parseResult((await run(["one", "--output", "json", "--base-url", server.url])).stdout);
    const second = parseResult((await run(["two", "--output", "json", "--base-url", server.url])).stdout);
    // The most recent session's metadata is broken: half written by hand, or planted.
    const broken = join(new SessionStore(stateDir).dirOf(second.session_id), "session.json");
    writeFileSync(broken, '{"id": "');
    const listed = await agent("sessions", "list", "--json");
    expect(listed.code).toBe(0);
    expect(SessionList.parse(JSON.parse(listed.stdout)).sessions.map((session) => session.session_id)).toEqual([first.session_id]);
    expect(listed.stderr).toContain(`agent: warning: corrupt state file ${broken}: not valid JSON`);
    const continued = parseResult((await run(["-c", "three", "--output", "json", "--base-url", server.url])).stdout);
    expect(continued.session_id).toBe(first.session_id);
    const shown = await agent("sessions", "show", second.session_id);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr).toContain(`corrupt state file ${broken}: not valid JSON`);
    server.assertDone();
  });
});

describe("one runtime per session", () => {
  test("two sessions run at once and both succeed; a second run of one session is exit 4; rm refused while it runs", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The first run's answer waits until the other processes are done with it.
    const server = startServer([{ text: "slow one", gate }, { text: "beside it" }]);
    const { run, agent, list, spawnRun } = sessionsSetup();
    const slow = spawnRun(["--session", "long", "take your time", "--base-url", server.url]);
    try {
      await until(() => server.requests.length === 1);
      // A new session while "long" runs: not blocked by it.
      const beside = await run(["meanwhile", "--output", "json", "--base-url", server.url]);
      expect({ code: beside.code, stderr: beside.stderr }).toEqual({ code: 0, stderr: "" });
      expect(parseResult(beside.stdout).result).toBe("beside it");
      // The same session again: refused at once, nothing sent.
      expectOneLineError(
        await run(["--session", "long", "again", "--base-url", server.url]),
        4,
        new RegExp(`state dir .* is busy, owned by pid ${slow.pid} on host .*session .* \\(long\\) is already running`),
      );
      const sessions = await list();
      expect(sessions.find((s) => s.name === "long")).toMatchObject({ state: "running", pid: slow.pid });
      expectOneLineError(await agent("sessions", "rm", "long"), 4, /is running; wait for it to finish/);
      expect(server.requests).toHaveLength(2);
    } finally {
      open();
    }
    const [stdout, code] = await Promise.all([new Response(slow.stdout).text(), slow.exited]);
    expect(code).toBe(0);
    expect(parseResult(stdout).result).toBe("slow one");
    server.assertDone();

    const removed = await agent("sessions", "rm", "long", "--json");
    expect(removed.code).toBe(0);
    expect((await list()).map((s) => s.name)).toEqual([null]);
    const text = await agent("sessions", "list");
    expect(text.stdout).toMatch(/^ID +NAME +CREATED \(UTC\) +LAST USED \(UTC\) +STATE +FIRST PROMPT\n\S+ +- +\S+ +\S+ +idle +meanwhile\n$/);
  }, 60_000);
});

describe("--workspace names the state root of every command", () => {
  test("the admin commands given the run's --workspace see its session, from another directory", async () => {
    const server = startServer([{ text: "done" }]);
    const { workspace } = runSetup();
    // No AGENT_STATE_DIR and no --state-dir: the state root is the workspace's .agent/state.
    const env = { OPENAI_API_KEY: "test-key", AGENT_STATE_DIR: undefined };
    const ran = await runAgent(["run", "hello", "--output", "json", "--workspace", workspace, "--base-url", server.url], { env });
    expect(ran.code).toBe(0);
    const sessionId = parseResult(ran.stdout).session_id;
    expect(existsSync(join(workspace, ".agent", "state", "sessions", sessionId))).toBe(true);

    const listed = await runAgent(["sessions", "list", "--json", "--workspace", workspace], { env });
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: "" });
    expect(SessionList.parse(JSON.parse(listed.stdout)).sessions.map((s) => s.session_id)).toEqual([sessionId]);

    const mailbox = await runAgent(["mailbox", "list", "--json", "--workspace", workspace], { env });
    expect(mailbox.code).toBe(0);
    expect(JSON.parse(mailbox.stdout).session_id).toBe(sessionId);

    const team = await runAgent(["--workspace", workspace, "team", "list"], { env });
    expect(team.code).toBe(0);
    expect(team.stdout).toContain(`session ${sessionId}`);
  });
});

describe("agent sessions prune", () => {
  /** Makes the session look last used `days` ago, as its session.json says. */
  function age(dir: string, days: number): void {
    const file = join(dir, "session.json");
    const meta = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...meta, lastUsedAtUtc: new Date(Date.now() - days * 86_400_000).toISOString() }));
  }

  test("deletes your idle sessions older than the duration; keeps running, pending and foreign ones unless told; --dry-run deletes nothing", async () => {
    const { root, stateDir, newSessionDir } = runSetup();
    const agent = (...args: string[]) => runAgent(["sessions", ...args, "--state-dir", stateDir]);
    const [oldIdle, recent, pending, running] = [newSessionDir(), newSessionDir(), newSessionDir(), newSessionDir()];
    const foreignStore = new SessionStore(stateDir, { marker: new SessionMarker(join(root, "another-users-key")) });
    const foreign = foreignStore.dirOf(foreignStore.create().id);
    for (const dir of [oldIdle, pending, running, foreign]) age(dir, 40);
    age(recent, 2);
    const sent = await runAgent(["mailbox", "send", "--session", basename(pending), "--to", "lead", "--from", "user", "--content", "hi", "--state-dir", stateDir]);
    expect(sent.code).toBe(0);
    age(pending, 40);
    const lock = await RuntimeLock.acquire(running);
    try {
      const dry = await agent("prune", "--older-than", "30d", "--dry-run", "--json");
      expect(dry.code).toBe(0);
      const plan = JSON.parse(dry.stdout);
      expect(plan.dry_run).toBe(true);
      expect(plan.pruned).toEqual([basename(oldIdle)]);
      expect(Object.fromEntries(plan.kept.map((k: { session_id: string; reason: string }) => [k.session_id, k.reason]))).toEqual({
        [basename(pending)]: "pending work",
        [basename(running)]: "running",
        [basename(foreign)]: "foreign",
      });
      expect(existsSync(oldIdle)).toBe(true);

      const done = await agent("prune", "--older-than", "30d");
      expect(done.code).toBe(0);
      expect(done.stdout).toContain(`pruned ${basename(oldIdle).slice(-8)}, last used `);
      expect(done.stdout).toContain(`kept ${basename(pending).slice(-8)}, last used`);
      expect(done.stdout).toEndWith("pruned 1 session(s) last used more than 30d ago; kept 3\n");
      expect(existsSync(oldIdle)).toBe(false);
      for (const dir of [recent, pending, running, foreign]) expect(existsSync(join(dir, "session.json"))).toBe(true);

      const withForeign = JSON.parse((await agent("prune", "--older-than", "30d", "--include-foreign", "--json")).stdout);
      expect(withForeign.pruned).toEqual([basename(foreign)]);
      expect(existsSync(foreign)).toBe(false);
    } finally {
      await lock.release();
    }
    expectOneLineError(await agent("prune", "--older-than", "soon"), 2, /invalid duration "soon"/);
  }, 30_000);
});
