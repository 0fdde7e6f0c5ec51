import type { SQL } from "bun";
import { stateError } from "./state-rows.ts";

/**
 * Deletes every row the store keeps for `session` — in each of its tables with
 * a `session` column, found in the catalogue so a table a later migration adds
 * is included — in one transaction: all of them go, or none. Returns how many.
 */
export async function deleteSessionRows(sql: SQL, session: string): Promise<number> {
  try {
    return await sql.begin(async (tx) => {
      const tables: { table_name: string }[] = await tx`
        SELECT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'session' AND table_name LIKE 'agent\\_%'
        ORDER BY table_name`;
      let deleted = 0;
      for (const { table_name: table } of tables) {
        const rows = await tx.unsafe(`DELETE FROM "${table.replaceAll('"', '""')}" WHERE session = $1`, [session]);
        deleted += Number((rows as { count?: number }).count ?? 0);
      }
      return deleted;
    });
  } catch (error) {
    throw stateError(`deleting the rows of session ${session}`, error, "none of them was deleted");
  }
}
