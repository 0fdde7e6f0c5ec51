import type { SQL } from "bun";
import { StoreMigrationError } from "../core/errors.ts";
import { MIGRATIONS, type Migration } from "./migrations/index.ts";

/**
 * Any fixed 64-bit key: every process migrating this database takes the same
 * transaction-scoped advisory lock, so two first uses at once apply each version
 * exactly once (the second waits, then finds nothing left to do).
 */
const MIGRATION_LOCK_KEY = 0x6167656e74_01n; // "agent", 1

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/**
 * Applies every migration newer than the database's version, in order, in one
 * transaction under the advisory lock; returns the versions applied (empty when
 * the schema was current). A database migrated by a newer build is refused:
 * this one would not know its tables.
 */
export async function migrate(sql: SQL): Promise<number[]> {
  checkList(MIGRATIONS);
  // The cheap look first: a current schema costs one query and no lock.
  const current = await currentVersion(sql);
  if (current === SCHEMA_VERSION) return [];
  if (current > SCHEMA_VERSION) throw tooNew(current);
  try {
    return await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      await tx`CREATE TABLE IF NOT EXISTS agent_schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
      const rows: { version: number }[] = await tx`SELECT version FROM agent_schema_migrations`;
      const done = new Set(rows.map((row) => Number(row.version)));
      const newest = Math.max(0, ...done);
      if (newest > SCHEMA_VERSION) throw tooNew(newest);
      const applied: number[] = [];
      for (const migration of MIGRATIONS) {
        if (done.has(migration.version)) continue;
        await tx.unsafe(migration.sql);
        await tx`INSERT INTO agent_schema_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
        applied.push(migration.version);
      }
      return applied;
    });
  } catch (error) {
    if (error instanceof StoreMigrationError) throw error;
    throw new StoreMigrationError(
      `migrating the PostgreSQL store failed: ${(error as Error).message}; nothing was changed (each run is one transaction): fix the cause and run \`agent store migrate\``,
      { cause: error },
    );
  }
}

/** Every version recorded as applied, oldest first, with when. */
export async function appliedMigrations(sql: SQL): Promise<{ version: number; name: string; appliedAt: string }[]> {
  if (!(await hasTable(sql))) return [];
  const rows: { version: number; name: string; applied_at: Date }[] =
    await sql`SELECT version, name, applied_at FROM agent_schema_migrations ORDER BY version`;
  return rows.map((row) => ({ version: Number(row.version), name: row.name, appliedAt: new Date(row.applied_at).toISOString() }));
}

async function currentVersion(sql: SQL): Promise<number> {
  if (!(await hasTable(sql))) return 0;
  const [row]: { version: number | null }[] = await sql`SELECT max(version) AS version FROM agent_schema_migrations`;
  return Number(row?.version ?? 0);
}

async function hasTable(sql: SQL): Promise<boolean> {
  const [row]: { exists: string | null }[] = await sql`SELECT to_regclass('agent_schema_migrations')::text AS exists`;
  return row?.exists != null;
}

function tooNew(version: number): StoreMigrationError {
  return new StoreMigrationError(
    `the PostgreSQL store's schema is at version ${version}, newer than this agent knows (${SCHEMA_VERSION}); upgrade agent on this machine`,
  );
}

/** A mistake in the list (a gap, a repeat) is a bug in this build, caught before it touches a database. */
function checkList(list: readonly Migration[]): void {
  list.forEach((migration, i) => {
    if (migration.version !== i + 1) throw new Error(`migration list out of order: entry ${i} has version ${migration.version}, expected ${i + 1}`);
  });
}
