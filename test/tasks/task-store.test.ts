import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { TaskStore } from "../../src/tasks/task-store.ts";
import { TaskBlockedError, TaskDependencyError, TaskStateError, UnknownTaskError } from "../../src/tasks/task-errors.ts";
import { backendRows } from "../support/store-backends.ts";
import { refusal, taskStore, taskStoreOn } from "./helpers.ts";

const ids = (tasks: { id: string }[]) => tasks.map((task) => task.id);

describe.each(backendRows())("task graph (%s store)", (_name, backend) => {

  test("create, get and list: short ids, a computed blocked flag, the same graph for every process", async () => {
    const { store, clock, session } = await taskStoreOn(backend);
    const t1 = await store.create({ subject: "Write the parser", description: "Handle quoted strings." });
    clock.advance(1_000);
    const t2 = await store.create({ subject: "Test the parser", blockedBy: ["t1"] });
    expect(t1).toEqual({
      id: "t1",
      subject: "Write the parser",
      description: "Handle quoted strings.",
      blockedBy: [],
      status: "pending",
      createdAtUtc: "2026-03-01T09:00:00.000Z",
      updatedAtUtc: "2026-03-01T09:00:00.000Z",
      openBlockers: [],
      blocked: false,
    });
    expect(t2).toMatchObject({ id: "t2", blockedBy: ["t1"], openBlockers: ["t1"], blocked: true, createdAtUtc: "2026-03-01T09:00:01.000Z" });
    expect(await store.get("t2")).toEqual(t2);
    expect(ids(await store.list())).toEqual(["t1", "t2"]);
    expect(ids(await store.list({ status: "in_progress" }))).toEqual([]);

    // Another store on the same session (another process, a later run) sees the same graph.
    expect(await new TaskStore({ table: session.open().tasks }).list()).toEqual(await store.list());
  });

  test("ids keep counting past ten in numeric order", async () => {
    const { store } = await taskStoreOn(backend);
    for (let n = 0; n < 11; n++) await store.create({ subject: `task ${n}` });
    expect(ids(await store.list()).slice(-3)).toEqual(["t9", "t10", "t11"]);
  });

  test("unknown blocker ids are refused, naming them and the known ids; nothing is written", async () => {
    const { store } = await taskStoreOn(backend);
    const empty = await refusal(store.create({ subject: "a", blockedBy: ["t4"] }));
    expect(empty).toBeInstanceOf(UnknownTaskError);
    expect(empty.message).toBe("unknown blocker t4; there are no tasks yet");
    await store.create({ subject: "first" });
    const error = await refusal(store.create({ subject: "b", blockedBy: ["t1", "t7", "t9"] }));
    expect(error.message).toBe("unknown blockers t7, t9; known tasks: t1");
    expect(ids(await store.list())).toEqual(["t1"]);
    expect((await refusal(store.get("t5"))).message).toBe("unknown task t5; known tasks: t1");
  });

  test("a claim of a blocked task is refused naming each open blocker and its status", async () => {
    const { store } = await taskStoreOn(backend);
    await store.create({ subject: "schema" });
    await store.create({ subject: "migration" });
    await store.create({ subject: "release", blockedBy: ["t1", "t2"] });
    await store.claim("t1", "alice");
    const error = await refusal(store.claim("t3", "bob"));
    expect(error).toBeInstanceOf(TaskBlockedError);
    expect(error.message).toBe("task t3 is blocked by t1 (in_progress), t2 (pending); it can be claimed once they are completed");
    expect(await store.get("t3")).toMatchObject({ status: "pending", openBlockers: ["t1", "t2"] });
  });

  test("completion reports the tasks it unblocked; a task with two blockers only after both", async () => {
    const { store, clock } = await taskStoreOn(backend);
    await store.create({ subject: "schema" });
    await store.create({ subject: "migration" });
    await store.create({ subject: "release", blockedBy: ["t1", "t2"] });
    await store.create({ subject: "docs", blockedBy: ["t1"] });
    await store.claim("t1", "alice");
    clock.advance(5_000);
    const first = await store.complete("t1", "alice");
    expect(first.task).toMatchObject({ id: "t1", status: "completed", owner: "alice", completedAtUtc: "2026-03-01T09:00:05.000Z" });
    expect(ids(first.unblocked)).toEqual(["t4"]);
    expect(await store.get("t3")).toMatchObject({ blocked: true, openBlockers: ["t2"] });

    await store.claim("t2", "bob");
    const second = await store.complete("t2", "bob");
    expect(second.unblocked).toEqual([await store.get("t3")]);
    expect(second.unblocked[0]).toMatchObject({ blocked: false, openBlockers: [] });
    expect(await store.claim("t3", "carol")).toMatchObject({ status: "in_progress", owner: "carol", claimedAtUtc: "2026-03-01T09:00:05.000Z" });
    // Nothing was waiting on t3 alone.
    expect((await store.complete("t3", "carol")).unblocked).toEqual([]);
  });

  test("a second claim is refused, whoever makes it", async () => {
    const { store } = await taskStoreOn(backend);
    await store.create({ subject: "only one" });
    await store.claim("t1", "alice");
    const other = await refusal(store.claim("t1", "bob"));
    expect(other).toBeInstanceOf(TaskStateError);
    expect(other.message).toBe("task t1 is already claimed by alice");
    expect((await refusal(store.claim("t1", "alice"))).message).toBe("task t1 is already claimed by you (alice)");
    expect(await store.get("t1")).toMatchObject({ owner: "alice" });
  });

  test("completing is refused for a non-owner, an unclaimed task and a completed one; the task is unchanged", async () => {
    const { store } = await taskStoreOn(backend);
    await store.create({ subject: "mine" });
    expect((await refusal(store.complete("t1", "alice"))).message).toBe("task t1 is not claimed; claim it before completing it");
    await store.claim("t1", "alice");
    const before = await store.get("t1");
    const error = await refusal(store.complete("t1", "bob"));
    expect(error).toBeInstanceOf(TaskStateError);
    expect(error.message).toBe("task t1 is claimed by alice, not bob; only its owner can complete it");
    expect(await store.get("t1")).toEqual(before);
    await store.complete("t1", "alice");
    expect((await refusal(store.complete("t1", "bob"))).message).toBe("task t1 is already completed by alice");
  });

  test("releaseOwnedBy puts only that owner's tasks in progress back to pending, with the note; a completed one stays", async () => {
    const { store } = await taskStoreOn(backend);
    for (const subject of ["a", "b", "c", "d"]) await store.create({ subject });
    await store.claim("t1", "alice");
    await store.claim("t2", "alice");
    await store.claim("t3", "bob");
    await store.claim("t4", "alice");
    await store.complete("t4", "alice");
    const back = await store.releaseOwnedBy("alice", "back to pending: its owner alice failed (boom)");
    expect(ids(back)).toEqual(["t1", "t2"]);
    const [t1, t2, t3, t4] = await store.list();
    for (const task of [t1, t2]) {
      expect(task).toMatchObject({ status: "pending", note: "back to pending: its owner alice failed (boom)" });
      expect(task?.owner).toBeUndefined();
      expect(task?.claimedAtUtc).toBeUndefined();
    }
    expect(t3).toMatchObject({ status: "in_progress", owner: "bob" });
    expect(t4).toMatchObject({ status: "completed", owner: "alice" });
    // Free to claim again, by anyone.
    expect(await store.claim("t1", "carol")).toMatchObject({ status: "in_progress", owner: "carol" });
    expect(await store.releaseOwnedBy("nobody", "x")).toEqual([]);
  });

  test("concurrent claims through separate store instances in one process: exactly one wins", async () => {
    const { store, session } = await taskStoreOn(backend);
    await store.create({ subject: "contested" });
    const claimers = Array.from({ length: 8 }, (_, n) => new TaskStore({ table: session.open().tasks }).claim("t1", `agent-${n}`));
    const outcomes = await Promise.allSettled(claimers);
    const winners = outcomes.flatMap((outcome, n) => (outcome.status === "fulfilled" ? [`agent-${n}`] : []));
    expect(winners.length).toBe(1);
    expect(await store.get("t1")).toMatchObject({ status: "in_progress", owner: winners[0] });
  });

});

describe("FileTaskStore files", () => {
  test("one 0600 file a task, exactly the task", async () => {
    const { store } = taskStore();
    const t1 = await store.create({ subject: "Write the parser" });
    const path = store.files.pathOf("t1");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const { openBlockers: _open, blocked: _blocked, ...stored } = t1;
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(stored);
  });

  test("self-reference and cycles are refused", async () => {
    const { store } = taskStore();
    const self = await refusal(store.create({ subject: "itself", blockedBy: ["t1"] }));
    expect(self).toBeInstanceOf(TaskDependencyError);
    expect(self.message).toBe("task t1 cannot be blocked by itself");
    // A new task's id is fresh, so only a hand-edited file can point at it ahead of time.
    await store.create({ subject: "a" });
    const edited = JSON.parse(readFileSync(store.files.pathOf("t1"), "utf8"));
    writeFileSync(store.files.pathOf("t1"), JSON.stringify({ ...edited, blockedBy: ["t2"] }));
    const cycle = await refusal(store.create({ subject: "b", blockedBy: ["t1"] }));
    expect(cycle).toBeInstanceOf(TaskDependencyError);
    expect(cycle.message).toBe("blockedBy would make a cycle t2 → t1 → t2; a cycle can never be finished");
    expect(ids(await store.list())).toEqual(["t1"]);
  });

  test("a corrupt task file is reported by name and left as it is", async () => {
    const { store } = taskStore();
    await store.create({ subject: "fine" });
    const path = store.files.pathOf("t2");
    writeFileSync(path, "{ not json");
    for (const operation of [store.list(), store.get("t1"), store.create({ subject: "next" }), store.claim("t1", "alice")]) {
      const error = await refusal(operation);
      expect(error).toBeInstanceOf(CorruptStateFileError);
      expect(error.message).toBe(`corrupt state file ${path}: not valid JSON; fix or move the file away, then retry`);
    }
    expect(readFileSync(path, "utf8")).toBe("{ not json");
  });

  test("schema violations, a mismatched id and a stray file name are corrupt too", async () => {
    const { store } = taskStore();
    const t1 = await store.create({ subject: "fine" });
    const { openBlockers: _open, blocked: _blocked, ...stored } = t1;
    const cases: [string, string, string][] = [
      ["t1.json", JSON.stringify({ ...stored, status: "done" }), "status: Invalid option"],
      ["t1.json", JSON.stringify({ ...stored, status: "in_progress" }), "owner: a claimed task needs owner and claimedAtUtc"],
      ["t1.json", JSON.stringify({ ...stored, extra: 1 }), 'Unrecognized key: "extra"'],
      ["t1.json", JSON.stringify({ ...stored, id: "t2" }), "it holds task t2, not t1"],
      ["notes.json", "{}", 'not a task file (expected a name like "t1.json")'],
    ];
    const original = readFileSync(store.files.pathOf("t1"), "utf8");
    for (const [name, content, reason] of cases) {
      writeFileSync(`${store.files.dir}/${name}`, content);
      const error = await refusal(store.list());
      expect(error).toBeInstanceOf(CorruptStateFileError);
      expect(error.message).toContain(`${store.files.dir}/${name}: `);
      expect(error.message).toContain(reason);
      if (name === "t1.json") writeFileSync(store.files.pathOf("t1"), original);
      else rmSync(`${store.files.dir}/${name}`);
    }
    expect(ids(await store.list())).toEqual(["t1"]);
  });
});
