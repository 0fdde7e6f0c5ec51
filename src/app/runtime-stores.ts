import { LEAD } from "../core/agent-name.ts";
import { FileLedger } from "../file-journal/file-ledger.ts";
import { ledgerIds, UsageLedger } from "../usage/usage-ledger.ts";
import { type MailboxBackend, openMailboxBackend } from "./mailbox-backend.ts";
import type { RuntimeBase } from "./runtime-context.ts";
import type { StateStores } from "./state-stores.ts";

/** Where the session's state lives: its mailbox, usage, histories, team, tasks and files' journal. */
export interface RuntimeStores {
  mailbox: MailboxBackend;
  usage: UsageLedger;
  stores: StateStores;
  /** One memory of the user's files for every agent of the runtime that works in its workspace (docs/files.md). */
  ledger: FileLedger;
}

/**
 * First of what can fail on the outside: an unreachable store ends the start
 * here. The mailbox is closed last of all, after the inbox has released what
 * the Lead never processed.
 */
export async function openStores({ settings, context, clock, closers, warn }: RuntimeBase): Promise<RuntimeStores> {
  const mailbox = await openMailboxBackend(settings, { stateDir: context.stateDir, sessionId: context.sessionId, fs: context.mailboxFs });
  closers.push(() => mailbox.close());
  const stores = context.stores ?? mailbox.state;
  // Read before the ledger opens usage.jsonl: what an OS crash took from its
  // unfsynced tail is re-derived from the histories before the budget counts.
  // The records usage.jsonl already holds are not parsed again (ledgerIds).
  const carried = await stores.histories.carriedUsage(ledgerIds(context.stateDir));
  const usage = UsageLedger.open(context.stateDir, { clock, carried, onError: (error) => warn(LEAD)(error.message) });
  closers.push(() => usage.close());
  const ledger = new FileLedger({
    backend: stores.files,
    clock,
    maxBlobBytes: settings.files.journalMaxBytes,
    shellScanMaxFiles: settings.files.shellScanMaxFiles,
  });
  return { mailbox, usage, stores, ledger };
}
