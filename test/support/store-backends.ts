import { FileJournalFiles } from "../../src/file-journal/file-backend.ts";
import { PgFileJournal } from "../../src/postgres/file-journal-rows.ts";
// The backends every store contract suite runs against: one suite, parametrised
// (`describe.each(storeBackends())`), never a copy per backend. The PostgreSQL
// one starts a throw-away cluster on first use, one per test file, and stops it
// (and every pool opened on it) after the file's tests.
import { afterAll } from "bun:test";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { SQL } from "bun";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";
import { FileCronTable } from "../../src/cron/cron-store.ts";
import { PgAttachments } from "../../src/postgres/attachment-rows.ts";
import { PgCronTable } from "../../src/postgres/cron-table.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgHistoryBackend } from "../../src/postgres/history-store.ts";
import { PgTaskTable } from "../../src/postgres/task-table.ts";
import { PgTeamRegistry } from "../../src/postgres/team-registry.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { FileTaskTable } from "../../src/tasks/task-store.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { type StateStores } from "../../src/app/state-stores.ts";
import { type PostgresCluster, startPostgres } from "./postgres.ts";
import { tempDir } from "./temp-dir.ts";

export interface BackendSession {
  /** Where the session lives: its state dir, or `<database URL>#<session id>`. */
  place: string;
  /** Stores on the session, new each call: as another process would open them. */
  open(): StateStores;
}

export interface StoreBackend {
  name: "file" | "postgres";
  /** A fresh, empty session. */
  session(): Promise<BackendSession>;
}

export const fileBackend: StoreBackend = {
  name: "file",
  async session() {
    const stateDir = join(tempDir("agent-stores-"), "state");
    return {
      place: stateDir,
      open: () => ({
        histories: new FileHistoryBackend(stateDir),
        team: new FileTeamRegistry(stateDir),
        tasks: new FileTaskTable(stateDir),
        cron: new FileCronTable(stateDir),
        files: new FileJournalFiles(stateDir),
        attachments: new FileAttachments(stateDir),
      }),
    };
  },
};

/** The PostgreSQL backend, bound to the calling test file: each session is a fresh session id in one migrated database. */
export function postgresBackend(): StoreBackend {
  let database: Promise<{ cluster: PostgresCluster; url: string }> | undefined;
  const pools: SQL[] = [];
  afterAll(async () => {
    for (const pool of pools) await pool.close().catch(() => {});
    await (await database)?.cluster.stop();
  });
  return {
    name: "postgres",
    async session() {
      database ??= (async () => {
        const cluster = await startPostgres();
        const url = await cluster.database();
        // Migrated once here, as the runtime's first use would.
        await (await PostgresConnection.open(url, { max: 1 })).close();
        return { cluster, url };
      })();
      const { url } = await database;
      const session = randomUUID();
      return {
        place: `${url}#${session}`,
        open: () => {
          // A pool per opening: another process has connections of its own.
          const sql = new SQL(url, { max: 4 });
          pools.push(sql);
          return {
            histories: new PgHistoryBackend(sql, session),
            team: new PgTeamRegistry(sql, session),
            tasks: new PgTaskTable(sql, session),
            cron: new PgCronTable(sql, session),
            files: new PgFileJournal(sql, session),
            attachments: new PgAttachments(sql, session),
          };
        },
      };
    },
  };
}

/** Both backends; the PostgreSQL one is bound to the calling test file. */
export function storeBackends(): StoreBackend[] {
  return [fileBackend, postgresBackend()];
}

/** `describe.each` rows: [name, backend]. */
export function backendRows(): [string, StoreBackend][] {
  return storeBackends().map((backend) => [backend.name, backend]);
}
