import { describe, expect, test } from "bun:test";
import { AGENT_BINARY } from "./agent-binary.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";
import { onXterm } from "./xterm-screen.ts";

// The interactive session's teammates in view, as the screen shows them: the
// team in the live block, `/view alice` switching the main pane to her stream
// while the Lead's output is held, Ctrl-T cycling Lead → alice → Lead, and
// `/team` as a list the arrow keys move through.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

describe("teammates in view in the session", () => {
  test("/view alice shows her tool calls as they come while the Lead's answer is held; Ctrl-T cycles; /team is a list to pick from", async () => {
    const write = Promise.withResolvers<void>();
    const leadAnswered = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "from alice\n" } }], gate: write.promise },
      { identity: "alice", text: "alice wrote a.txt" },
      { identity: "lead", text: "alice reported back.", check: () => leadAnswered.resolve() },
    ]);
    const setup = teamSetup();
    const t = onXterm(
      terminals,
      [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", "acceptEdits"],
      { OPENAI_API_KEY: "test-key" },
      { cols: 100, rows: 30 },
    );
    await t.waitFor("> ");
    t.type("have alice write a.txt\r");
    await t.waitFor("alice is on it.");
    // The live block shows the team above the prompt.
    const block = await t.waitFor("Ctrl-T or /team: view a teammate");
    expect(block).toMatch(/alice \(writer\)\s+running/);

    t.type("/view alice\r");
    await t.waitFor("── alice (Ctrl-T: next, /view lead: back to the Lead) ──");
    await t.waitFor(/\d\d:\d\d:\d\d > write a\.txt/);
    await t.waitFor("viewing alice (Ctrl-T: next, /view lead: back)");
    write.resolve();
    await t.waitFor(/→ write_file \{"path":"a\.txt"/);
    await t.waitFor("← write_file ok: created a.txt");
    await t.waitFor("alice: alice wrote a.txt");
    // The Lead answered her result meanwhile: held, said in one line, not shown.
    await leadAnswered.promise;
    await t.waitFor("agent: the Lead has more to show: held while you view alice (Ctrl-T or /view lead to see it)");

    // Ctrl-T: back to the Lead, and what it printed meanwhile.
    t.type("\x14");
    await t.waitFor("── the Lead: what it printed meanwhile ──");
    await t.waitFor("alice reported back.");
    // Its first appearance is below the header: it was held, not printed while alice was in view.
    const log = t.all().join("\n");
    expect(log.indexOf("alice reported back.")).toBeGreaterThan(log.indexOf("── the Lead: what it printed meanwhile ──"));
    // Ctrl-T again: alice (the only teammate), her stream from its end.
    t.type("\x14");
    await t.waitFor(/── alice \(Ctrl-T[^]*── alice \(Ctrl-T/, t.all);

    // /team: a list, the one in view marked; ↑ moves the marker to the Lead, Enter views it.
    t.type("/team\r");
    await t.waitFor("↑/↓ choose, Enter view, Esc close");
    expect(t.rows().some((row) => /^› alice \(writer\)/.test(row))).toBe(true);
    t.type("\x1b[A");
    await t.waitFor(/^› lead /m);
    t.type("\r");
    await t.waitFor(/── the Lead ──/);
    // Closed, the list stays in the log without its marker or hint.
    await t.settled();
    const after = t.all().join("\n");
    expect(after).not.toContain("↑/↓ choose");
    expect(after).toMatch(/^ {2}alice \(writer\)/m);
    await t.waitFor(/^> $/m);
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 40_000);

  test("/view of a name that is not a teammate says which there are; Ctrl-T with no team says there is none", async () => {
    const server = startServer([]);
    const setup = teamSetup();
    const t = onXterm(
      terminals,
      [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url],
      { OPENAI_API_KEY: "test-key" },
      { cols: 80, rows: 24 },
    );
    await t.waitFor("> ");
    t.type("/view bob\r");
    await t.waitFor("agent: /view failed: no teammate named bob: view one of lead");
    t.type("\x14");
    await t.waitFor("agent: no teammate to view yet");
    t.type("exit\r");
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 30_000);
});
