import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { parseResult, scriptedServers, toolCallReply } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";

// The durability rule of usage.jsonl (docs/observability.md#on-disk): each line
// is written as it happens (a killed process loses none) but never fsynced while
// agents work; every record rides in the billed agent's next history append, the
// durable write its step makes anyway, and a runtime re-derives from the
// histories what an OS crash took from the file — before its budget counts.

const startServer = scriptedServers();
const strace = Bun.which("strace");
const MODEL = "priced-model";
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});

interface Line {
  type: string;
  id?: string;
  agent: string;
  input_tokens: number;
}

const usageLines = (dir: string): Line[] =>
  readFileSync(join(dir, "usage.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);

const STORES = [
  ["files", async () => [] as string[]],
  [
    "PostgreSQL",
    async () => {
      cluster ??= startPostgres();
      return ["--store", await (await cluster).database()];
    },
  ],
] as const;

describe.each(STORES)("usage.jsonl durability (%s store)", (_name, storeArgs) => {
  test("killed mid-run, then usage.jsonl lost as an OS crash can lose it: what the server answered is counted again, and the budget with it", async () => {
    const store = await storeArgs();
    const { workspace, stateDir, sessionDir, drain, agent } = teamSetup();
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    // $1 per 1 000 input tokens: the three answered calls cost $6.
    writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ pricing: { [MODEL]: { input_per_mtok: 1000, output_per_mtok: 0 } } }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const fourth = new Promise<void>((resolve) => (reached = resolve));
    const answered = [1000, 2000, 3000];
    const server = startServer([
      // The subagent's call is billed to the Lead and rides on the Lead's append of the task's result.
      { identity: "lead", toolCalls: [{ name: "task", arguments: { description: "look", prompt: "List the files." } }], usage: { prompt_tokens: answered[0]!, completion_tokens: 0 } },
      { identity: "lead/task-1", text: "nothing there", usage: { prompt_tokens: answered[1]!, completion_tokens: 0 } },
      { identity: "lead", ...toolCallReply("glob", { pattern: "*" }), usage: { prompt_tokens: answered[2]!, completion_tokens: 0 } },
      { identity: "lead", gate: held.then(() => {}), check: () => reached(), text: "never" },
    ]);
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "look around", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--model", MODEL, ...store],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
    );
    await fourth;
    child.kill("SIGKILL");
    await child.exited;
    release();
    const dir = sessionDir();
    // kill -9 alone loses nothing: the lines were in the kernel.
    const written = usageLines(dir).filter((line) => line.type === "model_call");
    expect(written.map((line) => [line.agent, line.input_tokens])).toEqual(answered.map((tokens) => ["lead", tokens]));

    // An OS crash can take all of usage.jsonl: it is never fsynced while agents work.
    rmSync(join(dir, "usage.jsonl"));
    const shown = await agent("sessions", "show", basename(dir), "--json", ...store);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).usage).toMatchObject({ input_tokens: 6000, model_calls: 3 });

    // The budget counts them too: drain refuses without a call (no reply is left to give).
    const refused = await drain(["--base-url", server.url, "--model", MODEL, "--max-budget-usd", "5", "--output", "json", ...store]);
    expect(refused.code).toBe(1);
    expect(parseResult(refused.stdout)).toMatchObject({ subtype: "error_budget", usage: { model_calls: 0 } });
    server.assertDone();
    // …and usage.jsonl has them back, the same records as the killed run wrote.
    const rederived = usageLines(dir).filter((line) => line.type === "model_call");
    expect(rederived).toEqual(written);
  }, 60_000);
});

describe.each(STORES)("usage.jsonl durability of a team (%s store)", (_name, storeArgs) => {
  test("killed while the Lead and two teammates wait on the model, then usage.jsonl lost: each agent's answered calls come back from its own history", async () => {
    const store = await storeArgs();
    const { workspace, stateDir, sessionDir, drain, agent } = teamSetup();
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ pricing: { [MODEL]: { input_per_mtok: 1000, output_per_mtok: 0 } } }));
    const held = Promise.withResolvers<void>();
    // Each agent's next request is made only once its step is stored: killed when all three wait, every answer is in a history.
    const waiting = { lead: Promise.withResolvers<void>(), alice: Promise.withResolvers<void>(), bob: Promise.withResolvers<void>() };
    const spawn = (name: string) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt: "Look, then report." } });
    const gated = (identity: "lead" | "alice" | "bob") => ({ identity, gate: held.promise, check: () => waiting[identity].resolve(), text: "never" });
    const server = startServer([
      { identity: "lead", toolCalls: [spawn("alice"), spawn("bob")], usage: { prompt_tokens: 1000, completion_tokens: 0 } },
      { identity: "lead", ...toolCallReply("glob", { pattern: "*" }), usage: { prompt_tokens: 2000, completion_tokens: 0 } },
      gated("lead"),
      { identity: "alice", ...toolCallReply("glob", { pattern: "*" }), usage: { prompt_tokens: 300, completion_tokens: 0 } },
      gated("alice"),
      { identity: "bob", ...toolCallReply("glob", { pattern: "*" }), usage: { prompt_tokens: 40, completion_tokens: 0 } },
      gated("bob"),
    ]);
    const child = Bun.spawn(
      [AGENT_BINARY, "run", "have alice and bob look", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, "--model", MODEL, "--permission-mode", "acceptEdits", ...store],
      { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
    );
    await Promise.all([waiting.lead.promise, waiting.alice.promise, waiting.bob.promise]);
    child.kill("SIGKILL");
    await child.exited;
    held.resolve();
    const dir = sessionDir();
    const written = usageLines(dir).filter((line) => line.type === "model_call");
    // kill -9 alone loses nothing.
    expect(written).toHaveLength(4);
    rmSync(join(dir, "usage.jsonl"));
    const shown = await agent("sessions", "show", basename(dir), "--json", ...store);
    expect(shown.code).toBe(0);
    const json = JSON.parse(shown.stdout) as { usage: { input_tokens: number }; usage_by_agent: Record<string, { input_tokens: number; model_calls: number }> };
    expect(json.usage_by_agent).toMatchObject({
      lead: { input_tokens: 3000, model_calls: 2 },
      alice: { input_tokens: 300, model_calls: 1 },
      bob: { input_tokens: 40, model_calls: 1 },
    });
    expect(json.usage.input_tokens).toBe(3340);
    // The next runtime re-derives them before its budget counts: $3.34 spent refuses a $3 drain at once.
    const refused = await drain(["--base-url", server.url, "--model", MODEL, "--max-budget-usd", "3", "--output", "json", ...store]);
    expect(refused.code).toBe(1);
    expect(parseResult(refused.stdout)).toMatchObject({ subtype: "error_budget", usage: { model_calls: 0 } });
    server.assertDone();
    const ids = (lines: Line[]) => lines.map((line) => line.id).sort();
    expect(ids(usageLines(dir).filter((line) => line.type === "model_call"))).toEqual(ids(written));
  }, 60_000);
});

describe("usage.jsonl and the event loop", () => {
  if (requirePrerequisite("strace", strace ? undefined : "strace is not installed")) {
    test("a turn of four model calls never fsyncs usage.jsonl on the main thread, and once in all (closing, for the turn's line)", async () => {
      const { workspace, stateDir, root, sessionDir } = teamSetup();
      const server = startServer([
        toolCallReply("glob", { pattern: "*" }),
        toolCallReply("glob", { pattern: "*" }),
        toolCallReply("glob", { pattern: "*" }),
        { text: "done" },
      ]);
      const trace = join(root, "fsyncs.txt");
      const child = Bun.spawn(
        [strace!, "-f", "-y", "-e", "trace=execve,fsync,fdatasync", "-o", trace, AGENT_BINARY, "run", "list the files", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
      );
      expect(await child.exited).toBe(0);
      expect(usageLines(sessionDir()).map((record) => record.type)).toEqual(["model_call", "model_call", "model_call", "model_call", "turn"]);
      const lines = readFileSync(trace, "utf8").split("\n");
      // The first line is the agent's own execve: its pid is the main thread's id.
      const main = lines[0]!.split(" ")[0];
      const usageFsyncs = lines.filter((line) => /fsync\(\d+<[^>]*usage\.jsonl>/.test(line));
      expect(usageFsyncs.filter((line) => line.split(" ")[0] === main)).toEqual([]);
      expect(usageFsyncs).toHaveLength(1);
    });

    test("a subagent's calls (its history is in memory) are fsynced as they come, off the main thread", async () => {
      const { workspace, stateDir, root } = teamSetup();
      const server = startServer([
        { identity: "lead", toolCalls: [{ name: "task", arguments: { description: "look", prompt: "List the files." } }] },
        { identity: "lead/task-1", ...toolCallReply("glob", { pattern: "*" }) },
        { identity: "lead/task-1", text: "nothing there" },
        { identity: "lead", text: "done" },
      ]);
      const trace = join(root, "fsyncs.txt");
      const child = Bun.spawn(
        [strace!, "-f", "-y", "-s", "400", "-e", "trace=execve,fsync,fdatasync,write", "-o", trace, AGENT_BINARY, "run", "look", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
      );
      expect(await child.exited).toBe(0);
      server.assertDone();
      const lines = readFileSync(trace, "utf8").split("\n");
      const main = lines[0]!.split(" ")[0];
      const usageFsyncs = lines.filter((line) => /fsync\(\d+<[^>]*usage\.jsonl>/.test(line));
      expect(usageFsyncs.filter((line) => line.split(" ")[0] === main)).toEqual([]);
      // The subagent's lines are fsynced as they come, before the turn ends
      // (its line is the last written); closing fsyncs once more, for that line.
      const writes = lines.map((line, at) => ({ line, at })).filter(({ line }) => /write\(\d+<[^>]*usage\.jsonl>/.test(line));
      expect(writes.filter(({ line }) => /model_call.*lead\/task-1/.test(line))).toHaveLength(2);
      expect(writes.at(-1)!.line).toContain("turn");
      const fsyncAt = lines.flatMap((line, at) => (/fsync\(\d+<[^>]*usage\.jsonl>/.test(line) ? [at] : []));
      expect(fsyncAt.filter((at) => at < writes.at(-1)!.at).length).toBeGreaterThanOrEqual(1);
      expect(fsyncAt.filter((at) => at > writes.at(-1)!.at)).toHaveLength(1);
    });
  }
});
