// What only the PostgreSQL state stores do: the history's sequence fences a
// second writer, and a row written around the store is corrupt state naming the row.
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { HistoryConflictError } from "../../src/postgres/history-store.ts";
import { CorruptStateRowError } from "../../src/postgres/state-rows.ts";
import { HistoryStore } from "../../src/runtime/history-store.ts";
import { TaskStore } from "../../src/tasks/task-store.ts";
import { postgresBackend } from "../support/store-backends.ts";

const at = new Date("2026-03-01T12:00:00.000Z");
const backend = postgresBackend();

describe("PostgreSQL state stores", () => {
  test("two writers of one history: the one that read it first and appends second is refused, nothing of its append stored", async () => {
    const session = await backend.session();
    const first = await HistoryStore.open(session.open().histories, "alice");
    const second = await HistoryStore.open(session.open().histories, "alice");
    await second.appendMessages([{ role: "user", content: "from the new owner" }], at);
    const refused = await first.appendMessages([{ role: "user", content: "from the old owner" }], at).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HistoryConflictError);
    expect((refused as Error).message).toMatch(/another process appended to it since this one read it/);
    expect(first.messages).toEqual([]);
    expect((await HistoryStore.open(session.open().histories, "alice")).messages).toEqual([{ role: "user", content: "from the new owner" }]);
  });

  test("a history row or a task row that is not valid is corrupt state, named by table, session and key", async () => {
    const session = await backend.session();
    const [url = "", id = ""] = session.place.split("#");
    const sql = new SQL(url, { max: 1 });
    try {
      await sql`INSERT INTO agent_history (session, agent, seq, record) VALUES (${id}, 'lead', 1, '{"v":1,"type":"message"')`;
      const history = await HistoryStore.open(session.open().histories, "lead").catch((error: unknown) => error);
      expect(history).toBeInstanceOf(CorruptStateRowError);
      expect((history as Error).message).toBe(`corrupt row postgres:agent_history/${id}/lead#1: not valid JSON; fix or delete the row (psql), then retry`);

      const tasks = new TaskStore({ table: session.open().tasks });
      await tasks.create({ subject: "fine" });
      await sql`UPDATE agent_tasks SET record = replace(record, '"pending"', '"done"') WHERE session = ${id}`;
      const listed = await tasks.list().catch((error: unknown) => error);
      expect(listed).toBeInstanceOf(CorruptStateRowError);
      expect((listed as Error).message).toContain(`postgres:agent_tasks/${id}/t1: status`);
    } finally {
      await sql.close();
    }
  });
});
