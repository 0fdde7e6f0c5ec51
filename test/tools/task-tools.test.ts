import { describe, expect, test } from "bun:test";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { ClaimTaskInput } from "../../src/tools/claim-task.ts";
import { CreateTaskInput } from "../../src/tools/create-task.ts";
import { ListTasksInput } from "../../src/tools/list-tasks.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { toolSpecs } from "../../src/tools/schemas.ts";
import { taskTools } from "../../src/tools/task-tools.ts";
import { taskStore } from "../tasks/helpers.ts";
import { call, failure, workspaceContext } from "./helpers.ts";

describe("task tools", () => {
  test("taskTools gives the five tools in order, all coordinate, with the JSON schema the model sees", () => {
    const tools = taskTools(taskStore().store);
    expect(tools.map((tool) => tool.name)).toEqual(["create_task", "get_task", "list_tasks", "claim_task", "complete_task"]);
    expect(tools.map((tool) => tool.effect)).toEqual(Array(5).fill("coordinate"));
    expect(toolSpecs(tools)).toMatchSnapshot();
    for (const spec of toolSpecs(tools)) expect(spec.parameters).toMatchObject({ type: "object", additionalProperties: false });
  });

  test("the schemas refuse extra keys, an owner in the input, empty subjects, malformed ids and unknown statuses", () => {
    expect(CreateTaskInput.safeParse({ subject: "a", priority: 1 }).success).toBe(false);
    expect(CreateTaskInput.safeParse({ subject: "   " }).success).toBe(false);
    expect(CreateTaskInput.safeParse({ subject: "a", blockedBy: ["1"] }).success).toBe(false);
    expect(CreateTaskInput.safeParse({ subject: "a", blockedBy: ["../t1"] }).success).toBe(false);
    expect(ClaimTaskInput.safeParse({ id: "t1", owner: "mallory" }).success).toBe(false);
    expect(ClaimTaskInput.safeParse({ id: "t0" }).success).toBe(false);
    expect(ListTasksInput.safeParse({ status: "done" }).success).toBe(false);
    expect(ListTasksInput.parse({})).toEqual({});
    expect(CreateTaskInput.parse({ subject: " Ship it " })).toEqual({ subject: "Ship it" });
  });

  test("the handlers answer in short lines and refuse with one-line messages", async () => {
    const [create, get, list, claim, complete] = taskTools(taskStore().store);
    const lead = workspaceContext();
    const alice = { ...lead, identity: "alice" };
    expect(await call(list!, {}, lead)).toEqual({ content: "no tasks yet" });
    expect(await call(create!, { subject: "Write the parser", description: "Quoted strings too." }, lead)).toEqual({
      content: "created t1 [pending, ready to claim] Write the parser",
    });
    expect((await call(create!, { subject: "Test the parser", blockedBy: ["t1"] }, lead)).content).toBe(
      "created t2 [pending, blocked by t1] Test the parser",
    );
    expect((await call(list!, { status: "completed" }, lead)).content).toBe("no completed tasks");
    expect((await call(claim!, { id: "t1" }, alice)).content).toBe(
      "claimed t1 [in_progress, owner alice] Write the parser; call complete_task when it is done",
    );
    expect((await call(get!, { id: "t1" }, lead)).content).toBe(
      [
        "t1 [in_progress, owner alice] Write the parser",
        "blockedBy: none",
        "created 2026-03-01T09:00:00.000Z, claimed 2026-03-01T09:00:00.000Z",
        "",
        "Quoted strings too.",
      ].join("\n"),
    );
    expect((await failure(complete!, { id: "t1" }, lead)).message).toBe(
      "task t1 is claimed by alice, not lead; only its owner can complete it",
    );
    expect((await failure(get!, { id: "t9" }, lead)).message).toBe("unknown task t9; known tasks: t1, t2");
  });

  test("end to end through the ToolPipeline in plan mode: coordinate tools still run", async () => {
    const pipeline = new ToolPipeline({ tools: taskTools(taskStore().store), policy: new PermissionPolicy({ mode: "plan" }) });
    const lead = workspaceContext();
    const run = (name: string, args: unknown, context = lead) =>
      pipeline.execute({ id: "call_1", name, arguments: JSON.stringify(args) }, context);

    expect(await run("create_task", { subject: "schema" })).toEqual({ content: "created t1 [pending, ready to claim] schema" });
    expect(await run("create_task", { subject: "migration" })).toEqual({ content: "created t2 [pending, ready to claim] migration" });
    expect((await run("create_task", { subject: "release", blockedBy: ["t1", "t2"] })).content).toBe(
      "created t3 [pending, blocked by t1, t2] release",
    );
    expect(await run("create_task", { subject: "x", blockedBy: ["t8"] })).toEqual({
      content: "unknown blocker t8; known tasks: t1, t2, t3",
      isError: true,
    });
    expect(await run("claim_task", { id: "t3" })).toEqual({
      content: "task t3 is blocked by t1 (pending), t2 (pending); it can be claimed once they are completed",
      isError: true,
    });
    const invalid = await run("claim_task", { id: "t1", owner: "mallory" });
    expect(invalid.isError).toBe(true);
    expect(invalid.content).toStartWith("invalid input for claim_task: ");
    expect(invalid.content).toContain('Unrecognized key: "owner"');

    expect((await run("claim_task", { id: "t1" })).isError).toBeUndefined();
    expect((await run("claim_task", { id: "t2" }, { ...lead, identity: "bob" })).isError).toBeUndefined();
    expect(await run("claim_task", { id: "t1" }, { ...lead, identity: "bob" })).toEqual({
      content: "task t1 is already claimed by lead",
      isError: true,
    });
    expect(await run("complete_task", { id: "t1" })).toEqual({ content: "completed t1 schema; no task became ready to claim" });
    expect(await run("complete_task", { id: "t2" }, { ...lead, identity: "bob" })).toEqual({
      content: "completed t2 migration; now ready to claim:\nt3 [pending, ready to claim] release",
    });
    expect((await run("list_tasks", {})).content).toBe(
      ["t1 [completed, owner lead] schema", "t2 [completed, owner bob] migration", "t3 [pending, ready to claim] release"].join("\n"),
    );
    expect((await run("list_tasks", { status: "pending" })).content).toBe("t3 [pending, ready to claim] release");
    // Some models send no arguments at all for a call without required ones.
    expect((await pipeline.execute({ id: "call_2", name: "list_tasks", arguments: "" }, lead)).isError).toBeUndefined();
  });
});
