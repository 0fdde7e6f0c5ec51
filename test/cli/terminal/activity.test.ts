import { describe, expect, test } from "bun:test";
import { TeamActivity, teamViewLines } from "../../../src/cli/terminal/activity.ts";

describe("TeamActivity", () => {
  test("the team view's lines: the Lead, each teammate with its tool and tokens, events waiting", () => {
    let now = 1_000;
    const activity = new TeamActivity(() => now);
    activity.observe({ type: "user", agent: "lead", content: "go" });
    activity.observe({ type: "usage", agent: "lead", inputTokens: 1000, outputTokens: 200, finishReason: "stop" });
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
