import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import type { ScriptedReply } from "../support/model-server.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { runSetup, scriptedServers, toolCallReply } from "./run-fixture.ts";

// A model reply whose tool calls all only read is not fsynced before they run:
// the append of their results makes it durable with them (docs/performance.md,
// "A harness step"). A reply with a call that changes something still is. A
// teammate's turn begins without an fsync: its message stays in processing/. A
// last answer no Stop hook reads is made durable by the turn's end, written next.

const startServer = scriptedServers();
const strace = Bun.which("strace");

/** The fsyncs of an agent's history file in one `agent run`, and the history's records. */
async function historyFsyncs(script: ScriptedReply[], prepare: (workspace: string) => void, agent = "lead", extra: string[] = []) {
  const setup = runSetup();
  prepare(setup.workspace);
  const server = startServer(script);
  const trace = join(setup.root, "trace.txt");
  const child = Bun.spawn(
    [strace!, "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", trace, AGENT_BINARY, "run", "go", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--dangerously-skip-permissions", ...extra],
    { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "pipe" },
  );
  expect(await child.exited).toBe(0);
  server.assertDone();
  const history = join(setup.sessionDir(), "agents", `${agent}.jsonl`);
  const fsyncs = readFileSync(trace, "utf8")
    .split("\n")
    .filter((line) => /f(?:data)?sync\(\d+<([^>]*)>/.exec(line)?.[1] === history).length;
  const records = readFileSync(history, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { type: string; message?: { role: string } });
  return { fsyncs, assistants: records.filter((record) => record.message?.role === "assistant").length };
}

describe("a reading step's durability", () => {
  if (requirePrerequisite("strace", strace ? undefined : "strace is not installed")) {
    test("two steps that only read fsync the history twice less than two that write, and keep every reply", async () => {
      const files = (workspace: string) => {
        writeFileSync(join(workspace, "a.txt"), "alpha\n");
        writeFileSync(join(workspace, "b.txt"), "beta\n");
      };
      const reading = await historyFsyncs(
        [toolCallReply("read_file", { path: "a.txt" }), { toolCalls: [{ name: "glob", arguments: { pattern: "*.txt" } }, { name: "read_file", arguments: { path: "b.txt" } }] }, { text: "done" }],
        files,
      );
      const writing = await historyFsyncs(
        [toolCallReply("write_file", { path: "c.txt", content: "gamma\n" }), { toolCalls: [{ name: "glob", arguments: { pattern: "*.txt" } }, { name: "write_file", arguments: { path: "d.txt", content: "delta\n" } }] }, { text: "done" }],
        files,
      );
      // Both runs have the same records: three replies, two results, the same turn records.
      expect(reading.assistants).toBe(3);
      expect(writing.assistants).toBe(3);
      expect(writing.fsyncs - reading.fsyncs).toBe(2);
    }, 60_000);

    test("a teammate's turn begins without an fsync, and its answer is made durable with the turn's end: one fsync of its history", async () => {
      const run = await historyFsyncs(
        [
          { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "ann", role: "helper", prompt: "say hi" } }] },
          { identity: "lead", text: "waiting" },
          { identity: "ann", text: "hi" },
          { identity: "lead", text: "noted" },
        ],
        () => {},
        "ann",
      );
      expect(run.assistants).toBe(1);
      expect(run.fsyncs).toBe(1);
      // A SubagentStop hook reads the answer before the turn ends: the answer is durable first.
      const hooked = await historyFsyncs(
        [
          { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "ann", role: "helper", prompt: "say hi" } }] },
          { identity: "lead", text: "waiting" },
          { identity: "ann", text: "hi" },
          { identity: "lead", text: "noted" },
        ],
        (workspace) => {
          mkdirSync(join(workspace, ".agent"));
          writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ hooks: { SubagentStop: [{ hooks: [{ type: "command", command: "true" }] }] } }));
        },
        "ann",
        ["--trust-project"],
      );
      expect(hooked.fsyncs).toBe(2);
    }, 60_000);
  }
});
