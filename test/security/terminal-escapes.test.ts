import { describe, expect, test } from "bun:test";
import { basename } from "node:path";
import { AGENT_BINARY, runAgent } from "../e2e/agent-binary.ts";
import { runSetup, scriptedServers, toolCallReply } from "../e2e/run-fixture.ts";
import { terminalsKilledAfterEach } from "../e2e/terminals.ts";
import { onXterm } from "../e2e/xterm-screen.ts";

// Text from a model, a tool, a file name or a message reaches a terminal shown,
// never obeyed: each view is run on a real PTY and the bytes it sent are read.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

/** What a hostile model or repository writes, one sequence of each kind a terminal obeys. */
const ATTACKS = {
  clipboard: "\x1b]52;c;ZWNobyBvd25lZA==\x07",
  title: "\x1b]0;pwned\x07",
  clearScreen: "\x1b[2J",
  cursorUp: "\x1b[37A",
  dcs: "\x1bP+q544e\x1b\\",
  c1Csi: "\x9b31m",
  overwrite: "shown\rhidden",
  bidi: "\u202eevil",
  foreignLink: "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
  foreignColour: "\x1b[41m",
};
const HOSTILE = `look:${Object.values(ATTACKS).join("|")}:end`;

/** The raw sequences none of which may reach the terminal. */
function expectNothingObeyed(bytes: string): void {
  for (const [name, sequence] of Object.entries(ATTACKS)) {
    const raw = name === "overwrite" ? "shown\rhidden" : name === "bidi" ? "\u202e" : sequence;
    expect(`${name}: ${bytes.includes(raw)}`).toBe(`${name}: false`);
  }
}

/** Runs `argv` on a PTY until it exits: the bytes it sent and what the screen shows. */
async function onTerminal(argv: string[], env: Record<string, string | undefined>) {
  const { NO_COLOR: _, ...rest } = env;
  const term = onXterm(terminals, argv, { ...(rest as Record<string, string>), TERM: "xterm-256color", NO_COLOR: env.NO_COLOR ?? "" }, { cols: 200, rows: 60 }, 30_000);
  const code = await term.child.exited;
  await term.settled();
  return { code, bytes: term.bytes(), screen: term.all().join("\n") };
}

function hostileRun() {
  const setup = runSetup();
  const server = startServer([toolCallReply("write_file", { path: `notes/\x1b]0;file\x07name.txt`, content: `${HOSTILE}\n` }), { text: HOSTILE }]);
  const argv = [AGENT_BINARY, "run", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits", "--verbose", `note ${HOSTILE}`];
  return { ...setup, server, argv };
}

describe("agent run on a terminal", () => {
  for (const colour of [true, false]) {
    test(`${colour ? "markdown rendered" : "NO_COLOR"}: the answer, the tool call and its file name are shown, not obeyed`, async () => {
      const { argv, server } = hostileRun();
      const { code, bytes, screen } = await onTerminal(argv, { OPENAI_API_KEY: "test-key", NO_COLOR: colour ? "" : "1" });
      expect(code).toBe(0);
      server.assertDone();
      expectNothingObeyed(bytes);
      // Shown: ESC as ^[, BEL as ^G, C1 and bidi controls by code point.
      expect(screen).toContain("^[]52;c;ZWNobyBvd25lZA==^G");
      expect(screen).toContain("<U+009B>31m");
      expect(screen).toContain("shown^Mhidden");
      expect(screen).toContain("<U+202E>evil");
      // The renderer's own colours still come through (positive control).
      if (colour) expect(bytes).toContain("\x1b[");
    }, 60_000);
  }
});

describe("views of what a run left", () => {
  test("sessions show --timeline, --follow, changes, mailbox show and list: shown, not obeyed; piped, the bytes as stored", async () => {
    const { argv, server, stateDir, sessionDir } = hostileRun();
    const run = await runAgent(argv.slice(1), { env: { OPENAI_API_KEY: "test-key" } });
    expect(run.code).toBe(0);
    server.assertDone();
    const id = basename(sessionDir());
    // A message as a teammate (or a repository's planted state) could leave it.
    const sent = await runAgent(["mailbox", "send", "--to", "lead", "--from", "alice", "--content", HOSTILE, "--session", id, "--state-dir", stateDir, "--json"]);
    expect(sent.code).toBe(0);
    const messageIds = [...sent.stdout.matchAll(/"id":"([0-9a-f-]{36})"/g)].map((match) => match[1]!);
    expect(messageIds.length).toBe(1);

    const views: Record<string, string[]> = {
      timeline: ["sessions", "show", id, "--timeline"],
      follow: ["sessions", "show", id, "--follow"],
      changes: ["changes", "--session", id, "--diff"],
      mailboxShow: ["mailbox", "show", messageIds[0]!, "--session", id],
      mailboxList: ["mailbox", "list", "--session", id],
    };
    for (const [name, args] of Object.entries(views)) {
      const { code, bytes, screen } = await onTerminal([AGENT_BINARY, ...args, "--state-dir", stateDir], { NO_COLOR: "1" });
      expect(`${name} exit ${code}`).toBe(`${name} exit 0`);
      expectNothingObeyed(bytes);
      if (name !== "mailboxList") expect(`${name}: ${screen.includes("^[]52;c;ZWNobyBvd25lZA==^G")}`).toBe(`${name}: true`);
    }
    // Piped, a view prints the stored bytes as they are: a script reading them gets the data.
    const piped = await runAgent(["mailbox", "show", messageIds[0]!, "--session", id, "--state-dir", stateDir]);
    expect(piped.stdout).toContain(ATTACKS.clipboard);
  }, 120_000);
});
