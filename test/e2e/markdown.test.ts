import { expect, test } from "bun:test";
import { AGENT_BINARY, runAgent } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";
import { terminalsKilledAfterEach } from "./terminals.ts";
import { onXterm } from "./xterm-screen.ts";

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
  expect(screen).toContain("  \x1b[36mnpm test\x1b[0m");
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

// A long answer with every block kind, read off a headless xterm.js the size of the PTY.
const BOLD = `**${"The migration keeps every row and rewrites the index in place so readers never wait; ".repeat(4).slice(0, 296)}**`;
const LONG = [
  BOLD,
  "",
  "- first **step**",
  "  - nested *detail*",
  "1. one",
  "2. two",
  "",
  "| file | change |",
  "| --- | --- |",
  "| src/store/migrate.ts | rewrites the index in place, keeps every row |",
  "",
  "> Careful: **back up** first.",
  "",
  "```sql",
  "select 1;",
  "```",
  "Done.",
].join("\n");

for (const size of [
  { cols: 40, rows: 60 },
  { cols: 120, rows: 40 },
  { cols: 100, rows: 40, reportedCols: 0 },
]) {
  test(`on a ${size.cols}-column terminal${size.reportedCols === 0 ? " reporting 0 columns" : ""}: laid out, no raw markers, no row wider than the width`, async () => {
    const server = startServer([{ text: LONG }]);
    const { workspace, stateDir } = runSetup();
    const term = onXterm(
      terminals,
      [AGENT_BINARY, "run", "plan", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url],
      { OPENAI_API_KEY: "test-key", TERM: "xterm", NO_COLOR: "" },
      size,
    );
    expect(await term.child.exited).toBe(0);
    await term.settled();
    const rows = term.all();
    const screen = rows.join("\n");
    for (const marker of ["**", "```", "| ", "> "]) expect(screen).not.toContain(marker);
    expect(screen).toContain("• first step\n  ◦ nested detail\n1. one\n2. two");
    expect(screen).toContain("│ Careful: back up first.");
    expect(screen).toMatch(/^file +│ change\n─+┼─+\nsrc\/store\/migr/m);
    expect(screen).toContain("─── sql\n  select 1;\n───\nDone.");
    expect(screen.replace(/\s+/g, " ")).toContain(BOLD.slice(2, -2).trim());
    // Laid out for the width the program was told (80 for 0): no row runs to the terminal's edge and wraps.
    const width = size.reportedCols === 0 ? 80 : size.cols;
    for (const row of rows) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(width);
    expect(Math.max(...rows.map((row) => Bun.stringWidth(row)))).toBeGreaterThan(width - 15);
    server.assertDone();
  }, 30_000);
}

test("in the interactive session on a 40-column terminal: the streamed answer laid out, its quote behind a bar, not a prompt", async () => {
  const server = startServer([{ text: LONG }]);
  const { workspace, stateDir } = runSetup();
  const term = onXterm(
    terminals,
    [AGENT_BINARY, "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url],
    { OPENAI_API_KEY: "test-key", TERM: "xterm", NO_COLOR: "" },
    { cols: 40, rows: 60 },
  );
  await term.waitFor("> ");
  term.type("plan\r");
  await term.waitFor("Done.", term.all);
  term.type("exit\r");
  expect(await term.child.exited).toBe(0);
  await term.settled();
  const rows = term.all();
  const answer = rows.slice(rows.findIndex((row) => row.includes("The migration"))).join("\n");
  const screen = answer.slice(0, answer.indexOf("Done."));
  for (const marker of ["**", "```", "| ", "> "]) expect(screen).not.toContain(marker);
  expect(screen).toContain("│ Careful: back up first.");
  expect(screen).toContain("• first step\n  ◦ nested detail");
  for (const row of rows) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(40);
  server.assertDone();
}, 30_000);
