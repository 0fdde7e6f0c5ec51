import { expect, test } from "bun:test";
import { OrderedWriter } from "../../../src/cli/run/ordered-writer.ts";
import { RunOutput, type RunOutputOptions } from "../../../src/cli/run/run-output.ts";
import type { TeamOutcome } from "../../../src/cli/run/team-outcome.ts";
import type { RunEvent } from "../../../src/runtime/run-types.ts";
import { finalScreen } from "../../support/screen.ts";

// Text mode on a terminal: what stdout and stderr, sharing one screen, show in
// order while the Lead's answer streams in.

function terminal(layout: Pick<RunOutputOptions, "markdown" | "teamView"> = {}) {
  const screen: string[] = [];
  const stderr = new OrderedWriter(async (text) => {
    await Bun.sleep(1); // a slower stream than stdout: order must not depend on speed
    screen.push(`err:${text}`);
  });
  const output = new RunOutput({
    format: "text",
    level: "normal",
    stdout: async (text) => {
      screen.push(`out:${text}`);
    },
    stderr,
    terminal: { stdout: true, stderr: true },
    version: "test",
    streamAnswer: true,
    ...layout,
  });
  return { screen, output };
}

const outcome = (result: string): TeamOutcome => ({
  result: { result, subtype: "success", isError: false, turns: 2, usage: { inputTokens: 1, outputTokens: 1 }, durationMs: 1 },
  events: 0,
  eventTurns: 0,
  teammates: [],
  permissionDenials: [],
});
const info = { agent: "lead", model: "m", workspace: "/w", sessionId: "01a22bf8-101f-75cf-9445-5791772960c7", stateDir: "/s", permissionMode: "default" };
const delta = (text: string, agent = "lead"): RunEvent => ({ type: "assistant_delta", agent, text });

test("pieces print as they come; each reply ends its line before progress; the final answer is not repeated", async () => {
  const { screen, output } = terminal();
  for (const event of [
    delta("Let me "),
    delta("write it."),
    delta("teammate text is not printed", "alice"),
    { type: "assistant", agent: "lead", text: "Let me write it." },
    { type: "tool_call", agent: "lead", id: "c1", name: "write_file", arguments: "{}" },
    delta("Cut sho"),
    { type: "model_retry", agent: "lead", attempt: 1, delayMs: 0, reason: "the answer stream was cut before it finished" },
    delta("Done."),
    { type: "assistant", agent: "lead", text: "Done." },
  ] as RunEvent[]) {
    output.observe(event);
  }
  await output.finish(outcome("Done."), info);
  expect(screen).toEqual([
    "out:Let me ",
    "out:write it.",
    "out:\n",
    "err:[lead] write_file {}\n",
    "out:Cut sho",
    "out:\n",
    "err:[lead] model request failed (the answer stream was cut before it finished); retry 1 in 0.0 s\n",
    "out:Done.",
    "out:\n",
  ]);
});

test("a final answer that is not the last streamed reply (a Stop hook sent it back) is printed whole", async () => {
  const { screen, output } = terminal();
  output.observe(delta("First try."));
  output.observe({ type: "assistant", agent: "lead", text: "First try." });
  await output.finish(outcome("First try. And more."), info);
  expect(screen).toEqual(["out:First try.", "out:\n", "out:First try. And more.\n"]);
});

test("a markdown table held to the end of the reply is drawn with the team's status block off the screen, the block after it", async () => {
  const { screen, output } = terminal({ markdown: { columns: () => 60 }, teamView: { columns: () => 60, colour: false } });
  output.observe(delta("| a | b |\n|---|---|\n| 1 | 2 |\n"));
  // The block comes back while the table is held (the reply's text ended its line).
  output.observeTeam({ type: "teammate", name: "alice", role: "writer", state: "running" });
  output.observe({ type: "assistant", agent: "lead", text: "| a | b |\n|---|---|\n| 1 | 2 |" });
  await output.finish(outcome("| a | b |\n|---|---|\n| 1 | 2 |"), info);
  const shown = finalScreen(screen.map((text) => text.slice(4)).join(""));
  // The log line came while the table was held: it is above it.
  expect(shown).toEqual(["[alice] running (writer)", "a │ b", "──┼──", "1 │ 2", ""]);
});
