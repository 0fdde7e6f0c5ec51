import type { AgentName } from "../core/agent-name.ts";
import { MAILBOX_STATES, type MailboxState } from "../core/mailbox-state.ts";
import { describeEntry } from "../mailbox/listing.ts";
import { MailboxPaths, REASON_SUFFIX } from "../mailbox/paths.ts";
import type { MailboxEntry } from "../mailbox/store.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { type FsOps, realFs } from "../storage/fs-ops.ts";

/** Every message of one agent's mailbox now, in any state. */
export type MailboxPeek = () => Promise<MailboxEntry[]>;

/** Something that happened in the mailbox since the last look. */
export interface MailboxChange {
  change: "arrived" | "quarantined";
  entry: MailboxEntry;
}

/**
 * Tells what arrived in an agent's mailbox (and what was quarantined) between
 * looks. The first look reports only the messages still waiting (ready or
 * processing): what is done is the history's to tell.
 */
export class MailboxWatch {
  /** The state each message was last seen in, by file name (a move keeps the name). */
  #known = new Map<string, MailboxState>();
  #first = true;

  constructor(private readonly peek: MailboxPeek) {}

  async changes(): Promise<MailboxChange[]> {
    const entries = await this.peek();
    const changes: MailboxChange[] = [];
    for (const entry of entries) {
      const before = this.#known.get(entry.file);
      this.#known.set(entry.file, entry.state);
      if (before === entry.state) continue;
      if (entry.state === "quarantine") changes.push({ change: "quarantined", entry });
      else if (before === undefined && (!this.#first || entry.state === "ready" || entry.state === "processing")) changes.push({ change: "arrived", entry });
    }
    this.#first = false;
    return changes;
  }
}

/**
 * An agent's mailbox in files, read without the mailbox lock (a follower must
 * not slow the runtime's moves): the state directories are listed, and only a
 * file not seen before is read. A message moving meanwhile may be missed for
 * one look or seen in two states; the next look settles it.
 */
export function fileMailboxPeek(stateDir: string, agent: AgentName, maxContentBytes: number, fs: FsOps = realFs): MailboxPeek {
  const paths = new MailboxPaths(stateDir);
  const cache = new Map<string, MailboxEntry>();
  return async () => {
    const entries: MailboxEntry[] = [];
    const present = new Set<string>();
    for (const state of MAILBOX_STATES) {
      let names: string[];
      try {
        names = fs.readdirSync(paths.stateDirOf(agent, state));
      } catch (error) {
        if (isErrno(error, "ENOENT")) continue;
        throw error;
      }
      for (const file of names) {
        if (file.endsWith(REASON_SUFFIX)) continue;
        const key = `${state}/${file}`;
        present.add(key);
        const entry = cache.get(key) ?? describeEntry(fs, `${paths.stateDirOf(agent, state)}/${file}`, agent, state, file, maxContentBytes);
        if (!entry) continue;
        cache.set(key, entry);
        entries.push(entry);
      }
    }
    for (const key of cache.keys()) if (!present.has(key)) cache.delete(key);
    return entries.sort((a, b) => (a.createdAtUtc ?? "").localeCompare(b.createdAtUtc ?? ""));
  };
}
