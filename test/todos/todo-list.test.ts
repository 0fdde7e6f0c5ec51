import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { REMIND_AFTER_ROUNDS, TodoList } from "../../src/todos/todo-list.ts";
import { todoWriteTool } from "../../src/tools/todo-write.ts";
import { tempDir } from "../support/temp-dir.ts";

const context = { identity: "lead", idempotencyKey: "k", workspace: "/", signal: new AbortController().signal };

describe("todo_write", () => {
  test("replaces the list, shows it, persists it; more than one in_progress is refused", async () => {
    const stateDir = tempDir();
    const list = new TodoList(stateDir, "lead");
    const shown: unknown[] = [];
    const tool = todoWriteTool(list, (todos) => shown.push(todos));
    const todos = [
      { content: "write schema", status: "in_progress" as const },
      { content: "test it", status: "pending" as const },
    ];
    expect((await tool.run({ todos }, context)).content).toBe("todo list updated: 2 item(s), 0 completed");
    expect(shown).toEqual([todos]);
    expect(new TodoList(stateDir, "lead").todos).toEqual(todos);
    await expect(
      tool.run({ todos: todos.map((t) => ({ ...t, status: "in_progress" as const })) }, context),
    ).rejects.toThrow("at most one in progress");
    expect(new TodoList(stateDir, "lead").todos).toEqual(todos);
    writeFileSync(list.path, "{");
    expect(() => new TodoList(stateDir, "lead")).toThrow(CorruptStateFileError);
    expect(readFileSync(list.path, "utf8")).toBe("{");
  });

  test("a reminder comes after a few model calls without an update, and only while items are open", () => {
    const list = new TodoList(tempDir(), "lead");
    expect(list.reminder()).toBeUndefined();
    list.replace([{ content: "a", status: "in_progress" }, { content: "b", status: "pending" }]);
    for (let i = 0; i < REMIND_AFTER_ROUNDS; i++) expect(list.reminder()).toBeUndefined();
    const reminder = list.reminder();
    expect(reminder).toContain("[reminder]");
    expect(reminder).toContain("- [in_progress] a");
    expect(list.reminder()).toBeUndefined();
    list.replace([{ content: "a", status: "completed" }]);
    for (let i = 0; i < REMIND_AFTER_ROUNDS * 2; i++) expect(list.reminder()).toBeUndefined();
  });

  test("reminderDue says whether the next call gets a reminder, without counting a call", () => {
    const list = new TodoList(tempDir(), "lead");
    expect(list.reminderDue()).toBe(false);
    list.replace([{ content: "a", status: "pending" }]);
    for (let i = 0; i < REMIND_AFTER_ROUNDS; i++) {
      // Asked any number of times, it changes nothing.
      expect([list.reminderDue(), list.reminderDue()]).toEqual([false, false]);
      expect(list.reminder()).toBeUndefined();
    }
    expect(list.reminderDue()).toBe(true);
    expect(list.reminderDue()).toBe(true);
    expect(list.reminder()).toContain("[reminder]");
    expect(list.reminderDue()).toBe(false);
    list.replace([{ content: "a", status: "completed" }]);
    for (let i = 0; i < REMIND_AFTER_ROUNDS * 2; i++) {
      expect(list.reminderDue()).toBe(false);
      list.reminder();
    }
  });
});
