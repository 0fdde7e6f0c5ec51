import { describe, expect, test } from "bun:test";
import { StatusBlock } from "../../../src/cli/terminal/status-block.ts";
import { TeamActivity, teamViewLines } from "../../../src/cli/terminal/activity.ts";
import { finalScreen } from "../../support/screen.ts";

describe("StatusBlock", () => {
  test("the log scrolls above the block; the block follows it, clipped to the width; clear() leaves only the log", () => {
    let out = "";
    let lines = ["lead  working  thinking  1s"];
    let midLine = false;
    const block = new StatusBlock((text) => (out += text), { render: () => lines, columns: () => 20, mayDraw: () => !midLine });
    block.log("first\n");
    expect(finalScreen(out)).toEqual(["first", "lead  working  thi…", ""]);
    lines = ["lead  idle  2s", "alice (w)  running"];
    block.log("second\n");
    expect(finalScreen(out)).toEqual(["first", "second", "lead  idle  2s", "alice (w)  running", ""]);
    // An answer half printed owns the line: the block is hidden and not drawn.
    block.hide();
    out += "The ans";
    midLine = true;
    block.refresh();
    expect(finalScreen(out)).toEqual(["first", "second", "The ans"]);
    out += "wer.\n";
    midLine = false;
    block.refresh();
    expect(finalScreen(out)).toEqual(["first", "second", "The answer.", "lead  idle  2s", "alice (w)  running", ""]);
    block.clear();
    block.log("last\n");
    expect(finalScreen(out)).toEqual(["first", "second", "The answer.", "last", ""]);
  });

  test("suspend(): the block leaves the screen and no redraw or log line brings it back over a question until resume()", () => {
    let out = "";
    const block = new StatusBlock((text) => (out += text), { render: () => ["lead  working  3s"], columns: () => 80 });
    block.log("log\n");
    block.suspend();
    out += "allow? [y]es: ";
    block.refresh();
    block.log("");
    expect(finalScreen(out)).toEqual(["log", "allow? [y]es:"]);
    out += "n\n";
    block.resume();
    expect(finalScreen(out)).toEqual(["log", "allow? [y]es: n", "lead  working  3s", ""]);
  });

  test("the team view's lines: the Lead, each teammate with its tool and tokens, events waiting", () => {
    let now = 1_000;
    const activity = new TeamActivity(() => now);
    activity.observe({ type: "user", agent: "lead", content: "go" });
    activity.observe({ type: "usage", agent: "lead", inputTokens: 1000, outputTokens: 200 });
    activity.observeTeam({ type: "teammate", name: "alice", role: "writer", state: "running" });
    now = 4_000;
    activity.observe({ type: "tool_call", agent: "alice", id: "c1", name: "write_file", arguments: "{}" });
    activity.observeTeam({ type: "mailbox", op: "send", agent: "lead", id: "m1", from: "bob", kind: "result" });
    expect(teamViewLines(activity, 6_000)).toEqual([
      "lead  working  thinking  5s  1.2k tokens",
      "alice (writer)  running  write_file  5s",
      "1 event waiting for the Lead",
    ]);
  });
});

test("the team view names the files each agent changed in its current turn; a failed write is not one, a new turn starts afresh", () => {
  const activity = new TeamActivity(() => 1_000);
  const write = (agent: string, id: string, path: string) => activity.observe({ type: "tool_call", agent, id, name: "write_file", arguments: JSON.stringify({ path, content: "x" }) });
  const result = (agent: string, id: string, isError = false) => activity.observe({ type: "tool_result", agent, id, name: "write_file", content: "", isError });
  activity.observeTeam({ type: "teammate", name: "alice", role: "api", state: "running" });
  for (const [id, path] of [["1", "src/a.ts"], ["2", "src/b.ts"], ["3", "src/a.ts"], ["4", "src/c.ts"], ["5", "src/d.ts"]] as const) {
    write("alice", id, path);
    result("alice", id);
  }
  write("alice", "6", "src/refused.ts");
  result("alice", "6", true);
  expect(teamViewLines(activity, 1_000)[1]).toBe("alice (api)  running  thinking  0s  changed src/a.ts, src/b.ts, src/c.ts +1");
  activity.observeTeam({ type: "teammate", name: "alice", role: "api", state: "idle" });
  expect(teamViewLines(activity, 1_000)[1]).toBe("alice (api)  idle  0s  changed src/a.ts, src/b.ts, src/c.ts +1");
  activity.observeTeam({ type: "teammate", name: "alice", role: "api", state: "running" });
  expect(teamViewLines(activity, 1_000)[1]).toBe("alice (api)  running  thinking  0s");
});
