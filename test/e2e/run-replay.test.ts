import { beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/temp-dir.ts";
import { ensureBinary, runAgent } from "./agent-binary.ts";
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

test("the README's text-mode command prints the answer", async () => {
  const workspace = tempDir("agent-replay-");
  const result = await runAgent(["run", "--replay", EXAMPLE_CASSETTE, ...EXAMPLE_FLAGS, "--workspace", workspace, EXAMPLE_PROMPT], {
    env: { OPENAI_API_KEY: undefined, AGENT_STATE_DIR: undefined },
  });
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `${EXAMPLE_ANSWER}\n` });
  expect(result.stderr).toContain("[lead] write_file ");
  expect(result.stderr).toContain("[lead] read_file ");
  expect(existsSync(join(workspace, ".agent", "agents", "lead.jsonl"))).toBe(true);
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
