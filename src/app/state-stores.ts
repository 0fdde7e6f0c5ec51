import { FileCronTable, type CronTable } from "../cron/cron-store.ts";
import { FileHistoryBackend } from "../runtime/file-history.ts";
import type { HistoryBackend } from "../runtime/history-store.ts";
import { FileTaskTable, type TaskTable } from "../tasks/task-store.ts";
import { FileTeamRegistry, type TeamRegistry } from "../team/team-registry.ts";

/**
 * What a session shares between its agents besides the mailbox (and, in
 * PostgreSQL, between machines). The runtime sees these interfaces only.
 */
export interface StateStores {
  histories: HistoryBackend;
  team: TeamRegistry;
  tasks: TaskTable;
  cron: CronTable;
}

/** The file backend's stores of a session's state dir (the default). */
export function fileStores(stateDir: string): StateStores {
  return {
    histories: new FileHistoryBackend(stateDir),
    team: new FileTeamRegistry(stateDir),
    tasks: new FileTaskTable(stateDir),
    cron: new FileCronTable(stateDir),
  };
}
