import { expect, test } from "bun:test";
import { AGENT_BINARY, runAgent } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";

// The answer's markdown is rendered on a terminal with colour, and printed as
// written when piped.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();

const ANSWER = "# Plan\nRun `npm test` and **read** it.\n```\nnpm test\n```";

test("on a terminal: heading, inline code, bold and the code block in colour", async () => {
  const server = startServer([{ text: ANSWER }]);
  const { workspace, stateDir } = runSetup();
  let screen = "";
  const decoder = new TextDecoder();
  const { NO_COLOR: _, ...env } = process.env;
  const child = Bun.spawn([AGENT_BINARY, "run", "plan", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url], {
    env: { ...env, OPENAI_API_KEY: "test-key", TERM: "xterm" },
    terminal: { cols: 120, rows: 30, data: (_terminal, data) => (screen += decoder.decode(data, { stream: true })) },
  });
  terminals.push(child);
  expect(await child.exited).toBe(0);
  expect(screen).toContain("\x1b[1m\x1b[4mPlan\x1b[0m");
  expect(screen).toContain("Run \x1b[36mnpm test\x1b[0m and \x1b[1mread\x1b[0m it.");
  expect(screen).toContain("    \x1b[36mnpm test\x1b[0m");
  server.assertDone();
}, 30_000);

test("piped: the answer as the model wrote it", async () => {
  const server = startServer([{ text: ANSWER }]);
  const { workspace, stateDir } = runSetup();
  const result = await runAgent(["run", "plan", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url], {
    env: { OPENAI_API_KEY: "test-key", NO_COLOR: undefined },
  });
  expect(result).toMatchObject({ code: 0, stdout: `${ANSWER}\n`, stderr: "" });
  server.assertDone();
}, 30_000);
