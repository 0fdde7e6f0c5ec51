import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../../package.json" with { type: "json" };
import { ManualClock, systemClock } from "../../src/core/clock.ts";
import type { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY, ensureBinary, runAgent } from "./agent-binary.ts";
import { UUID, expectError, expectOk, message, setup, showJson } from "./fixture.ts";

beforeAll(() => {
  ensureBinary();
}, 120_000);

describe("agent --version / --help", () => {
  test("--version prints the package version and the build", async () => {
    const result = await runAgent(["--version"]);
    expectOk(result);
    expect(result.stdout).toMatch(new RegExp(`^${packageJson.version.replaceAll(".", "\\.")}(\\+[0-9a-f]+)?\\n$`));
  });

  test("--help works at every level and lists the options", async () => {
    const cases: [string[], string[]][] = [
      [["--help"], ["Usage: agent <command>", "mailbox", "--state-dir <dir>", "--version"]],
      [["mailbox", "--help"], ["Usage: agent mailbox <command>", "send", "list", "show", "recover", "prune"]],
      [["mailbox", "send", "--help"], ["--to <name>", "--content-file <path|->", "--kind <task|message|result>"]],
      [["mailbox", "list", "-h"], ["--agent <name>", "--state <ready|processing|done|quarantine>", "--json"]],
      [["mailbox", "show", "--help"], ["Usage: agent mailbox show <ID>"]],
      [["mailbox", "recover", "--help"], ["--force", "--agent <name>"]],
      [["--help", "mailbox", "prune"], ["--older-than <duration>"]],
    ];
    for (const [args, expected] of cases) {
      const result = await runAgent(args);
      expectOk(result);
      for (const text of expected) expect(result.stdout).toContain(text);
      expect(result.stdout).not.toContain("\u001b[");
    }
  });

  test("`agent help [CMD]` and `agent version` answer as --help and --version do", async () => {
    for (const [words, flags] of [
      [["help"], ["--help"]],
      [["help", "mailbox", "show"], ["mailbox", "show", "--help"]],
      [["version"], ["--version"]],
    ]) {
      const typed = await runAgent(words!);
      expectOk(typed);
      expect(typed.stdout).toBe((await runAgent(flags!)).stdout);
    }
    expectError(await runAgent(["help", "nope"]), 2, /unknown command "nope" for "agent"; run `agent --help`/);
  });
});

describe("agent mailbox send", () => {
  test("sends inline content to lead and prints the new id", async () => {
    const { agent } = setup();
    const sent = await agent("mailbox", "send", "--to", "lead", "--from", "alice", "--content", "hello");
    expectOk(sent);
    const id = sent.stdout.trimEnd();
    expect(id).toMatch(UUID);
    const shown = await showJson(agent, id);
    expect(shown).toMatchObject({ agent: "lead", state: "ready" });
    expect(shown.message).toMatchObject({ id, sender: "alice", recipient: "lead", kind: "message", content: "hello" });
  });

  test("keeps content byte-for-byte from --content, --content-file and stdin", async () => {
    const { agent, agentWith } = setup();
    const tricky = "  \tleading and trailing whitespace, CRLF\r\n, unicode é 🚀, a BOM \ufeff and blank lines\n\n\n";
    const file = join(tempDir(), "content.txt");
    writeFileSync(file, `\ufeff${tricky}`);
    const sources: [string[], string | undefined, string][] = [
      [["--content", tricky], undefined, tricky],
      [["--content-file", file], undefined, `\ufeff${tricky}`],
      [["--content-file", "-"], tricky, tricky],
    ];
    for (const [flags, stdin, expected] of sources) {
      const sent = await agentWith(stdin === undefined ? {} : { stdin }, "mailbox", "send", "--to", "lead", "--from", "alice", ...flags);
      expectOk(sent);
      const shown = await showJson(agent, sent.stdout.trimEnd());
      expect(shown.message.content).toBe(expected);
    }
  });

  test("--json prints the whole message; --kind sets the kind; a value may start with a dash", async () => {
    const { agent } = setup();
    const sent = await agent("mailbox", "send", "--to", "lead", "--from", "bob", "--kind", "result", "--content", "--x", "--json");
    expectOk(sent);
    const lines = sent.stdout.split("\n");
    expect(lines).toHaveLength(2);
    const json = JSON.parse(lines[0] as string);
    expect(json).toMatchObject({ sender: "bob", recipient: "lead", kind: "result", content: "--x" });
    expect(json.idempotencyKey).toBe(json.id);
  });

  test("sends to a teammate that has a mailbox, and refuses an unknown one before writing", async () => {
    const { agent, store, stateDir } = setup();
    expectError(await agent("mailbox", "send", "--to", "bob", "--from", "lead", "--content", "x"), 6, /unknown agent "bob"/);
    expect(existsSync(join(stateDir, "mailboxes", "bob"))).toBe(false);
    await store.send(message("bob", "first"));
    const sent = await agent("mailbox", "send", "--to", "bob", "--from", "lead", "--content", "second");
    expectOk(sent);
    expect((await showJson(agent, sent.stdout.trimEnd())).agent).toBe("bob");
  });

  test("rejects invalid agent names with exit 2 and writes nothing", async () => {
    const { agent, stateDir } = setup();
    for (const [to, from, why] of [
      ["Bob", "alice", /invalid agent name "Bob": it has upper-case letters/],
      ["lead", "../x", /invalid agent name "\.\.\/x": it contains a path piece/],
      ["con", "alice", /invalid agent name "con": it is a reserved device name/],
      ["lead", "a_b", /invalid agent name "a_b"/],
    ] as const) {
      expectError(await agent("mailbox", "send", "--to", to, "--from", from, "--content", "x"), 2, why);
    }
    expect(existsSync(join(stateDir, "mailboxes"))).toBe(false);
  });

  test("content errors: none, both, empty, missing file, not UTF-8", async () => {
    const { agent, agentWith } = setup();
    const base = ["mailbox", "send", "--to", "lead", "--from", "alice"];
    expectError(await agent(...base), 2, /exactly one of --content TEXT or --content-file/);
    expectError(await agent(...base, "--content", "a", "--content-file", "-"), 2, /exactly one of/);
    expectError(await agent(...base, "--content", ""), 2, /content from --content is empty/);
    expectError(await agent(...base, "--content-file", "/nonexistent/file"), 2, /cannot read --content-file \/nonexistent\/file: no such file/);
    expectError(await agentWith({ stdin: new Uint8Array([0x61, 0xff]) }, ...base, "--content-file", "-"), 2, /not valid UTF-8/);
    expectError(await agent(...base, "--content", "a", "--kind", "note"), 2, /invalid value "note" for --kind: expected one of task, message, result/);
    expectError(await agent("mailbox", "send", "--from", "alice", "--content", "a"), 2, /missing required option --to/);
  });
});

describe("global options", () => {
  test("--state-dir and --verbose work before and after the subcommand; the first send starts a session", async () => {
    const stateDir = join(tempDir(), "state");
    const before = await runAgent(["--state-dir", stateDir, "--verbose", "mailbox", "send", "--to", "lead", "--from", "a", "--content", "1"]);
    const middle = await runAgent(["mailbox", "--state-dir", stateDir, "send", "--to", "lead", "--from", "a", "--content", "2"]);
    const after = await runAgent(["mailbox", "send", "--to", "lead", "--from", "a", "--content", "3", `--state-dir=${stateDir}`]);
    for (const result of [before, middle, after]) expectOk(result);
    const listed = await runAgent(["--state-dir", stateDir, "mailbox", "list", "--json"]);
    expect(JSON.parse(listed.stdout).agents[0].counts.ready).toBe(3);
  });

  test("the state root comes from AGENT_STATE_DIR, else <cwd>/.agent/state", async () => {
    const cwd = tempDir();
    const fromEnv = join(tempDir(), "env-state");
    const args = ["mailbox", "send", "--to", "lead", "--from", "a", "--content", "x"];
    expectOk(await runAgent(args, { cwd, env: { AGENT_STATE_DIR: fromEnv } }));
    const sessionDir = (root: string) => new SessionStore(root).dirOf(new SessionStore(root).mostRecent()?.id ?? "none");
    expect(readdirSync(join(sessionDir(fromEnv), "mailboxes", "lead", "ready"))).toHaveLength(1);
    expectOk(await runAgent(args, { cwd, env: { AGENT_STATE_DIR: undefined } }));
    expect(readdirSync(join(sessionDir(join(cwd, ".agent", "state")), "mailboxes", "lead", "ready"))).toHaveLength(1);
  });

  test("errors are one line; --verbose adds the stack", async () => {
    const { agent } = setup();
    const plain = await agent("mailbox", "show", "not-a-uuid");
    expectError(plain, 2, /invalid message id "not-a-uuid": expected a canonical lowercase UUID/);
    const verbose = await agent("mailbox", "show", "not-a-uuid", "--verbose");
    expect(verbose.code).toBe(2);
    expect(verbose.stderr.split("\n")[0]).toBe(plain.stderr.trimEnd());
    expect(verbose.stderr).toContain("InvalidMessageIdError");
    expect(verbose.stderr).toContain("src/cli/mailbox/show.ts");
  });

  test("unknown flags, subcommands and arguments are usage errors pointing at --help", async () => {
    const { agent } = setup();
    expectError(await agent("mailbox", "list", "--bogus"), 2, /unknown option --bogus for "agent mailbox list"; run `agent mailbox list --help`/);
    expectError(await agent("mailbox", "send", "--to=lead", "--from", "a", "--content", "x", "--tos", "b"), 2, /unknown option --tos/);
    expectError(await agent("--jsn", "mailbox", "list"), 2, /unknown option --jsn for "agent"/);
    expectError(await agent("mailbox", "lst"), 2, /unknown command "lst" for "agent mailbox"; run `agent mailbox --help`/);
    expectError(await agent("mailbx"), 2, /unknown command "mailbx" for "agent"/);
    expectError(await runAgent([]), 2, /"agent" needs a command: run, drain, team, mailbox, cron, [a-z, ]*config[a-z, ]*sessions[a-z, ]*; run `agent --help`/);
    expectError(await agent("mailbox"), 2, /"agent mailbox" needs a command: send, list, show, recover, prune/);
    expectError(await agent("mailbox", "list", "extra"), 2, /too many arguments for "agent mailbox list"/);
    expectError(await agent("mailbox", "list", "--json", "--json"), 2, /option --json is given more than once/);
    expectError(await agent("mailbox", "list", "--json=yes"), 2, /option --json takes no value/);
    expectError(await runAgent(["mailbox", "list", "--state-dir"]), 2, /option --state-dir needs a value/);
  });
});

describe("agent mailbox list", () => {
  async function populate(store: FileMailboxStore) {
    const old = new ManualClock("2026-01-01T00:00:00.000Z");
    const first = message("alice", "one", old);
    old.advance(1000);
    const second = message("alice", "two", old);
    await store.send(first);
    await store.send(second);
    await store.send(message("lead", "to the lead", systemClock, "alice"));
    const claimed = await store.claim("alice");
    return { first, second, claimed };
  }

  test("--json: one object with counts and messages per agent, no content", async () => {
    const { agent, store, sessionId } = setup();
    const { first, second, claimed } = await populate(store);
    expect(claimed?.id).toBe(first.id);
    const listed = await agent("mailbox", "list", "--json");
    expectOk(listed);
    expect(listed.stdout.split("\n")).toHaveLength(2);
    const json = JSON.parse(listed.stdout);
    expect(Object.keys(json)).toEqual(["session_id", "agents"]);
    expect(json.session_id).toBe(sessionId);
    expect(json.agents.map((a: { name: string }) => a.name)).toEqual(["alice", "lead"]);
    const alice = json.agents[0];
    expect(alice.counts).toEqual({ ready: 1, processing: 1, done: 0, quarantine: 0 });
    expect(alice.messages).toEqual([
      { id: second.id, sender: "lead", kind: "task", state: "ready", createdAtUtc: second.createdAtUtc, size: expect.any(Number) },
      { id: first.id, sender: "lead", kind: "task", state: "processing", createdAtUtc: first.createdAtUtc, size: expect.any(Number) },
    ]);
    expect(listed.stdout).not.toContain("two");
  });

  test("--agent and --state filter; counts stay whole", async () => {
    const { agent, store } = setup();
    const { second } = await populate(store);
    const json = JSON.parse((await agent("mailbox", "list", "--agent", "alice", "--state", "ready", "--json")).stdout);
    expect(json.agents).toHaveLength(1);
    expect(json.agents[0].counts).toEqual({ ready: 1, processing: 1, done: 0, quarantine: 0 });
    expect(json.agents[0].messages.map((m: { id: string }) => m.id)).toEqual([second.id]);
  });

  test("the human table shows each agent's counts and messages", async () => {
    const { agent, store } = setup();
    const { first, second } = await populate(store);
    const listed = await agent("mailbox", "list");
    expectOk(listed);
    expect(listed.stdout).toContain("alice: 1 ready, 1 processing, 0 done, 0 quarantine");
    expect(listed.stdout).toContain("lead: 1 ready, 0 processing, 0 done, 0 quarantine");
    expect(listed.stdout).toMatch(new RegExp(`ready\\s+${second.id}\\s+task\\s+lead\\s+2026-01-01T00:00:01.000Z`));
    expect(listed.stdout).toMatch(new RegExp(`processing\\s+${first.id}`));
  });

  test("an empty session or a missing state root lists nothing and creates nothing", async () => {
    const { agent, stateDir, sessionId } = setup();
    const listed = await agent("mailbox", "list");
    expectOk(listed);
    expect(listed.stdout).toBe(`no mailboxes in session ${sessionId}\n`);
    expect(JSON.parse((await agent("mailbox", "list", "--json")).stdout)).toEqual({ session_id: sessionId, agents: [] });
    expect(existsSync(join(stateDir, "mailboxes"))).toBe(false);
    const root = join(tempDir(), "state");
    expect(await runAgent(["mailbox", "list", "--state-dir", root])).toEqual({ code: 0, stdout: `no sessions in ${root}\n`, stderr: "" });
    expect(JSON.parse((await runAgent(["mailbox", "list", "--json", "--state-dir", root])).stdout)).toEqual({ session_id: null, agents: [] });
    expect(existsSync(root)).toBe(false);
  });

  test("bad filters: unknown agent is exit 6, bad state and bad name exit 2", async () => {
    const { agent, store } = setup();
    await populate(store);
    expectError(await agent("mailbox", "list", "--agent", "zed"), 6, /unknown agent "zed"/);
    expectError(await agent("mailbox", "list", "--state", "pending"), 2, /invalid value "pending" for --state: expected one of ready, processing, done, quarantine/);
    expectError(await agent("mailbox", "list", "--agent", "Zed"), 2, /invalid agent name "Zed"/);
  });
});

describe("agent mailbox show", () => {
  test("prints the whole message, its state and agent", async () => {
    const { agent, store } = setup();
    const sent = message("lead", "  line one\nline two  \n", systemClock, "alice");
    await store.send(sent);
    const shown = await agent("mailbox", "show", sent.id);
    expectOk(shown);
    expect(shown.stdout).toMatch(/^agent: +lead$/m);
    expect(shown.stdout).toMatch(/^state: +ready$/m);
    expect(shown.stdout).toMatch(new RegExp(`^id: +${sent.id}$`, "m"));
    expect(shown.stdout.endsWith(`\n\n${sent.content}`)).toBe(true);
    const json = await showJson(agent, sent.id);
    expect(json).toEqual({ agent: "lead", state: "ready", file: `${sent.id}.json`, message: { ...sent } });
  });

  test("a reader that stops early (| head) ends it quietly", async () => {
    const { store, root } = setup();
    const big = message("lead", "x".repeat(1_000_000));
    await store.send(big);
    const pipeline = Bun.spawn(
      ["bash", "-c", `"$0" mailbox show ${big.id} --state-dir "$1" | head -c 5 >/dev/null; exit "\${PIPESTATUS[0]}"`, AGENT_BINARY, root],
      // This test's HOME (set by the preload), so the session's marker key is the one that made it.
      { stdout: "pipe", stderr: "pipe", env: process.env },
    );
    const [stderr, code] = await Promise.all([new Response(pipeline.stderr).text(), pipeline.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });

  test("malformed id is exit 2, an absent one exit 6", async () => {
    const { agent, store } = setup();
    await store.send(message("lead", "x"));
    expectError(await agent("mailbox", "show", "0190B8A6-7C1E-7D3A-9F00-3B2A1C4D5E6F"), 2, /invalid message id/);
    expectError(await agent("mailbox", "show"), 2, /missing argument ID/);
    const absent = "0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f";
    expectError(await agent("mailbox", "show", absent), 6, new RegExp(`message ${absent} not found`));
  });
});
