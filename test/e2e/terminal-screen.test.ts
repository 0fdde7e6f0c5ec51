import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { AGENT_BINARY } from "./agent-binary.ts";
import { lastToolResult, scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";
import { type ScreenSize, onXterm } from "./xterm-screen.ts";

// `agent run` on a real pseudo-terminal read through a headless xterm.js: what
// a person sees at several widths — a permission question stays on screen
// while the team's status block would tick, one key answers it, and a terminal
// that reports 0 columns still gets whole lines.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();
const QUESTION = "lead wants to run write_file (edit):";

/** The Lead spawns alice and bob (each held at its first request until released), then asks to write notes.txt. */
function teamThenEdit() {
  const alice = Promise.withResolvers<void>();
  const bob = Promise.withResolvers<void>();
  const server = startServer([
    {
      identity: "lead",
      toolCalls: [
        { name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } },
        { name: "spawn_teammate", arguments: { name: "bob", role: "tester", prompt: "check b.txt" } },
      ],
    },
    { identity: "lead", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }] },
    { identity: "alice", text: "alice done", gate: alice.promise },
    { identity: "bob", text: "bob done", gate: bob.promise },
    { identity: "lead", text: "edit refused; waiting for the team.", check: (r) => expect(lastToolResult(r)).toContain("denied") },
    { identity: "lead", text: "alice reported." },
    { identity: "lead", text: "bob reported." },
  ]);
  return { server, alice, bob };
}

function agentRun(setup: ReturnType<typeof teamSetup>, url: string, size: ScreenSize, mode = "default") {
  return onXterm(
    terminals,
    [AGENT_BINARY, "run", "write notes.txt with the team", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", url, "--permission-mode", mode],
    { OPENAI_API_KEY: "test-key" },
    size,
  );
}

describe("agent run on a terminal, as the screen shows it", () => {
  for (const size of [
    { cols: 80, rows: 24 },
    { cols: 40, rows: 24 },
    { cols: 200, rows: 50 },
  ]) {
    test(`${size.cols}×${size.rows}: the question stays visible while two teammates work; n without Enter denies; the block comes back`, async () => {
      const { server, alice, bob } = teamThenEdit();
      const setup = teamSetup();
      const t = agentRun(setup, server.url, size);
      await t.waitFor(QUESTION);
      await t.waitFor("tell the model why: ");
      // The status block redraws every second: two redraws later the question is still whole.
      await Bun.sleep(2500);
      const shown = (await t.waitFor(QUESTION)).replace(/\n/g, "");
      expect(shown).toContain("[e] no and tell the model why:");
      expect(shown).toContain("+notes");
      t.type("n");
      await t.waitFor("edit refused; waiting for the team.", t.all);
      // The block is back below the log while the teammates still work.
      const after = await t.waitFor(/alice \(writer\)\s+running/);
      expect(after).toMatch(/bob \(tester\)\s+running/);
      alice.resolve();
      await t.waitFor("alice reported.", t.all);
      bob.resolve();
      expect(await t.child.exited).toBe(0);
      server.assertDone();
      expect(existsSync(join(setup.workspace, "notes.txt"))).toBe(false);
      // Asked once: a redraw never printed it twice.
      expect(t.all().join("\n").split(QUESTION).length).toBe(2);
    }, 40_000);
  }

  test("a terminal reporting 0 columns: the status block's lines are whole, not cut to ten characters", async () => {
    const alice = Promise.withResolvers<void>();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write a.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "alice done", gate: alice.promise },
      { identity: "lead", text: "alice reported." },
    ]);
    const setup = teamSetup();
    const t = agentRun(setup, server.url, { cols: 80, rows: 24, reportedCols: 0 }, "acceptEdits");
    await t.waitFor(/alice \(writer\)\s+running/);
    alice.resolve();
    await t.waitFor("alice reported.", t.all);
    expect(await t.child.exited).toBe(0);
    server.assertDone();
  }, 30_000);
});
