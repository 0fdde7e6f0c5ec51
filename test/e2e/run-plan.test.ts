import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseStream, runSetup, scriptedServers, toolCallReply as call } from "./run-fixture.ts";

// The compiled binary: the Lead plans with todo_write, creates two dependent
// tasks in the task graph, finds the second blocked, completes the first (which
// unblocks the second), then the second, and closes its plan.

const startServer = scriptedServers();

describe("agent run: planning with todo_write and the task graph", () => {
  test("two dependent tasks are created, the blocked one refused, both completed in order", async () => {
    const plan = (first: string, second: string) => ({
      todos: [
        { content: "create the schema", status: first },
        { content: "write the migration", status: second },
      ],
    });
    const server = startServer([
      call("todo_write", plan("in_progress", "pending")),
      call("create_task", { subject: "create the schema" }, (t) => expect(t).toContain("todo list updated")),
      call("create_task", { subject: "write the migration", blockedBy: ["t1"] }, (t) => expect(t).toContain("t1")),
      call("claim_task", { id: "t2" }, (t) => expect(t).toContain("t2")),
      call("claim_task", { id: "t1" }, (t) => expect(t).toContain("blocked by t1")),
      call("complete_task", { id: "t1" }, (t) => expect(t).toContain("t1")),
      call("claim_task", { id: "t2" }, (t) => expect(t).toMatch(/ready to claim[\s\S]*t2|t2[\s\S]*ready to claim/)),
      call("complete_task", { id: "t2" }, (t) => expect(t).toContain("t2")),
      call("todo_write", plan("completed", "completed"), (t) => expect(t).toContain("completed")),
      { text: "Both tasks are done." },
    ]);
    const { run, sessionDir } = runSetup();
    const result = await run(["--base-url", server.url, "--output", "stream-json", "plan the schema work"]);
    expect(result.code).toBe(0);
    const lines = parseStream(result.stdout);
    expect(lines.filter((line) => line.type === "todos")).toHaveLength(2);
    expect(lines.filter((line) => line.type === "tool_result" && line.is_error).map((line) => (line as { name: string }).name)).toEqual([
      "claim_task",
    ]);
    expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "Both tasks are done." });
    for (const id of ["t1", "t2"]) {
      expect(JSON.parse(readFileSync(join(sessionDir(), "tasks", `${id}.json`), "utf8"))).toMatchObject({ status: "completed", owner: "lead" });
    }
    expect(JSON.parse(readFileSync(join(sessionDir(), "todos/lead.json"), "utf8")).todos.every((t: { status: string }) => t.status === "completed")).toBe(true);
    // Several model calls passed without a todo_write: the Lead was reminded of its open items.
    expect(server.requests.some((r) => JSON.stringify(r.body.messages).includes("[reminder]"))).toBe(true);
    // The plan is shown on stderr as it changes.
    expect(result.stderr).toContain("[lead] todo list:");
    server.assertDone();
  });
});
