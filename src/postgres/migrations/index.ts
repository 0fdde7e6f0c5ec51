import { mailboxMigration } from "./001-mailbox.ts";
import { stateMigration } from "./002-state.ts";
import { teammateLeasesMigration } from "./003-teammate-leases.ts";
import { hotClaimsMigration } from "./004-hot-claims.ts";
import { fileJournalMigration } from "./005-file-journal.ts";
import { attachmentsMigration } from "./006-attachments.ts";

/** One schema change, applied once per database in version order (see ../migrations.ts). */
export interface Migration {
  version: number;
  name: string;
  /** Statements run inside the migration's transaction. */
  sql: string;
}

/**
 * Every schema version, in order, numbered from 1 without gaps. Never edit an
 * entry that shipped: add the next version (a backend's new tables, a column).
 */
export const MIGRATIONS: readonly Migration[] = [mailboxMigration, stateMigration, teammateLeasesMigration, hotClaimsMigration, fileJournalMigration, attachmentsMigration];
