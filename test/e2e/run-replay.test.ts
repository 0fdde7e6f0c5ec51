import { beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY, REPO_ROOT, ensureBinary, runAgent } from "./agent-binary.ts";
import { EXAMPLE_ANSWER, EXAMPLE_CASSETTE, EXAMPLE_FLAGS, EXAMPLE_PROMPT, recordExample } from "./example-cassette.ts";
import { expectOneLineError, parseStream, runSetup } from "./run-fixture.ts";

// The README's offline quick start: the committed example cassette replays a
// multi-step run with tool calls, with no API key and no network.

beforeAll(() => {
  ensureBinary();
}, 120_000);

const REGENERATE = "the example cassette is stale: regenerate it with `bun test/e2e/example-cassette.ts`";

test("the example replays offline: write_file, read_file, then the answer", async () => {
  const { run, workspace } = runSetup();
  const result = await run(["--replay", EXAMPLE_CASSETTE, ...EXAMPLE_FLAGS, "--output", "stream-json", EXAMPLE_PROMPT], {
    env: { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
  });
  if (result.code !== 0) throw new Error(`${REGENERATE}\n${result.stderr}`);
  const lines = parseStream(result.stdout);
  const calls = lines.flatMap((l) => (l.type === "tool_call" ? [l.name] : []));
  expect(calls).toEqual(["write_file", "read_file"]);
  expect(lines.find((l) => l.type === "tool_result" && l.name === "read_file")).toMatchObject({ content: "Hello from agent!\n", is_error: false });
  expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", result: EXAMPLE_ANSWER, turns: 3 });
  expect(readFileSync(join(workspace, "hello.txt"), "utf8")).toBe("Hello from agent!\n");
});

test("the example run twice on one workspace (hello.txt removed between): two sessions, both replay", async () => {
  const workspace = tempDir("agent-replay-");
  for (let time = 1; time <= 2; time++) {
    // The recorded world is an empty workspace: write_file creates hello.txt.
    rmSync(join(workspace, "hello.txt"), { force: true });
    const result = await runAgent(["run", "--replay", EXAMPLE_CASSETTE, ...EXAMPLE_FLAGS, "--workspace", workspace, EXAMPLE_PROMPT], {
      env: { OPENAI_API_KEY: undefined, AGENT_STATE_DIR: undefined },
    });
    expect({ time, code: result.code, stdout: result.stdout }).toEqual({ time, code: 0, stdout: `${EXAMPLE_ANSWER}\n` });
    expect(result.stderr).toContain("[lead] write_file ");
    expect(result.stderr).toContain("[lead] read_file ");
  }
  const sessions = readdirSync(join(workspace, ".agent", "state", "sessions"));
  expect(sessions).toHaveLength(2);
  for (const id of sessions) expect(existsSync(join(workspace, ".agent", "state", "sessions", id, "agents", "lead.jsonl"))).toBe(true);
  expect(readFileSync(join(workspace, ".agent", ".gitignore"), "utf8")).toMatch(/^state\/\nconfig\.local\.json\n$/m);
});

test("the README's quick-start snippet, run as written twice in a row: exit 0 and the answer both times", async () => {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const snippet = readme.slice(readme.indexOf("### 1. Offline")).match(/```sh\n([\s\S]*?)```/)?.[1];
  expect(snippet).toContain("agent run --replay examples/scripted-create-file.cassette.jsonl");
  // `agent` on PATH is the compiled binary; no key, no endpoint, no user config.
  const bin = tempDir("agent-bin-");
  symlinkSync(AGENT_BINARY, join(bin, "agent"));
  const home = tempDir("agent-home-");
  for (let time = 1; time <= 2; time++) {
    const child = Bun.spawnSync(["bash", "-euc", snippet as string], {
      cwd: REPO_ROOT,
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect({ time, code: child.exitCode, stdout: child.stdout.toString() }).toEqual({ time, code: 0, stdout: `${EXAMPLE_ANSWER}\n` });
  }
});

test("a prompt the cassette does not hold: exit 3, one line", async () => {
  const { run } = runSetup();
  const result = await run(["--replay", EXAMPLE_CASSETTE, ...EXAMPLE_FLAGS, "something else"], { env: { OPENAI_API_KEY: undefined } });
  expectOneLineError(result, 3, /cassette/);
});

test("recording the example again gives the committed file", async () => {
  const fresh = join(tempDir("agent-record-"), "example.jsonl");
  await recordExample(fresh);
  expect(readFileSync(fresh, "utf8"), REGENERATE).toBe(readFileSync(EXAMPLE_CASSETTE, "utf8"));
}, 60_000);
