import type { AttachmentStore } from "../attachments/attachment-store.ts";
import { FileAttachments } from "../attachments/file-attachments.ts";
import { FileCronTable, type CronTable } from "../cron/cron-store.ts";
import { FileJournalFiles } from "../file-journal/file-backend.ts";
import type { FileJournalBackend } from "../file-journal/journal-records.ts";
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
  /** What the agents read and wrote of the user's files, and the journal of their changes. */
  files: FileJournalBackend;
  /** What did not fit in a message: a teammate's long answer, read with read_attachment. */
  attachments: AttachmentStore;
}

/** The file backend's stores of a session's state dir (the default). */
export function fileStores(stateDir: string): StateStores {
  return {
    histories: new FileHistoryBackend(stateDir),
    team: new FileTeamRegistry(stateDir),
    tasks: new FileTaskTable(stateDir),
    cron: new FileCronTable(stateDir),
    files: new FileJournalFiles(stateDir),
    attachments: new FileAttachments(stateDir),
  };
}
