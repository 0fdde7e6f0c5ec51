// The backends every store contract suite runs against: one suite, parametrised
// (`describe.each(STORE_BACKENDS)`), never a copy per backend.
import { join } from "node:path";
import { FileCronTable, type CronTable } from "../../src/cron/cron-store.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import type { HistoryBackend } from "../../src/runtime/history-store.ts";
import { FileTaskTable, type TaskTable } from "../../src/tasks/task-store.ts";
import { FileTeamRegistry, type TeamRegistry } from "../../src/team/team-registry.ts";
import { tempDir } from "./temp-dir.ts";

/** One session's shared state, as a runtime sees it. */
export interface StateStores {
  histories: HistoryBackend;
  team: TeamRegistry;
  tasks: TaskTable;
  cron: CronTable;
}

export interface BackendSession {
  /** Stores on the session, new each call: as another process would open them. */
  open(): StateStores;
}

export interface StoreBackend {
  name: string;
  /** A fresh, empty session. */
  session(): Promise<BackendSession>;
  /** Frees what the backend started (call in afterAll). */
  close(): Promise<void>;
}

export const fileBackend: StoreBackend = {
  name: "file",
  async session() {
    const stateDir = join(tempDir("agent-stores-"), "state");
    return {
      open: () => ({
        histories: new FileHistoryBackend(stateDir),
        team: new FileTeamRegistry(stateDir),
        tasks: new FileTaskTable(stateDir),
        cron: new FileCronTable(stateDir),
      }),
    };
  },
  async close() {},
};

export const STORE_BACKENDS: StoreBackend[] = [fileBackend];
