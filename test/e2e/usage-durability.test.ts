import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { runSetup, scriptedServers, toolCallReply } from "./run-fixture.ts";

// The durability rule of usage.jsonl (docs/observability.md): every record is
// written as it happens, so a killed process loses none, but only a turn's
// record is fsynced — one durable write per turn, not one per model-call step
// on top of the history's.

const startServer = scriptedServers();
const strace = Bun.which("strace");

const usageLines = (dir: string) =>
  readFileSync(join(dir, "usage.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string });

describe("usage.jsonl durability", () => {
  test("a run killed mid-turn has every model call answered before the kill in usage.jsonl", async () => {
    const setup = runSetup();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const third = new Promise<void>((resolve) => (reached = resolve));
    const server = startServer([
      toolCallReply("glob", { pattern: "*" }),
      toolCallReply("glob", { pattern: "*" }),
      { gate: held.then(() => {}), check: () => reached(), text: "never" },
    ]);
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "list the files", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
    );
    await third;
    child.kill("SIGKILL");
    await child.exited;
    release();
    expect(usageLines(setup.sessionDir()).map((record) => record.type)).toEqual(["model_call", "model_call"]);
  });

  if (requirePrerequisite("strace", strace ? undefined : "strace is not installed")) {
    test("a turn of four model calls fsyncs usage.jsonl once", async () => {
      const setup = runSetup();
      const server = startServer([
        toolCallReply("glob", { pattern: "*" }),
        toolCallReply("glob", { pattern: "*" }),
        toolCallReply("glob", { pattern: "*" }),
        { text: "done" },
      ]);
      const trace = join(setup.root, "fsyncs.txt");
      const child = Bun.spawn(
        [strace!, "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", trace, AGENT_BINARY, "run", "list the files", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
      );
      expect(await child.exited).toBe(0);
      expect(usageLines(setup.sessionDir()).map((record) => record.type)).toEqual(["model_call", "model_call", "model_call", "model_call", "turn"]);
      const usageFsyncs = readFileSync(trace, "utf8").split("\n").filter((line) => /fsync\(\d+<[^>]*usage\.jsonl>\)/.test(line));
      expect(usageFsyncs).toHaveLength(1);
    });
  }
});
