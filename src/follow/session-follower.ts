import type { HistoryRecord } from "../runtime/history-store.ts";
import { pause } from "../team/team-watch.ts";
import type { HistoryTail } from "./history-tail.ts";
import type { MailboxChange, MailboxWatch } from "./mailbox-watch.ts";

/** What a follower passes on, in the order it found it. */
export type FollowItem =
  | { type: "record"; record: HistoryRecord }
  | { type: "mail"; change: MailboxChange }
  /** The history was replaced by a new one (read from its start next). */
  | { type: "replaced" }
  /** The history went away (moved aside) after it had been read. */
  | { type: "gone" };

/** Where one agent of one session is followed from: its history, its mailbox, and whether the session's runtime lives. */
export interface FollowSource {
  history: HistoryTail;
  mailbox?: MailboxWatch;
  /** Whether a runtime owns the session now (read without taking its lock). */
  running(): Promise<boolean>;
}

export interface FollowOptions {
  /** How long to wait between looks. */
  everyMs: number;
  signal: AbortSignal;
  /** Called once, after the first look: what came before it is the history so far, what comes after is new. */
  caughtUp?: () => void;
}

/** Why following stopped: the session's runtime was gone and everything was read, or `signal` aborted. */
export type FollowEnd = "ended" | "stopped";

/**
 * Reads what the agent has done so far, then looks again every `everyMs` and
 * passes on what was appended. Stops when `signal` aborts, or at the first look
 * that finds the session without a runtime — whether it runs is asked before
 * the history is read, so that last read holds everything the runtime wrote
 * before it let the session go (appends are durable before the lock is
 * released): nothing more can come. A session not running at all is read once.
 */
export async function followAgent(source: FollowSource, emit: (item: FollowItem) => Promise<void>, options: FollowOptions): Promise<FollowEnd> {
  let present = false;
  let first = true;
  for (;;) {
    const running = await source.running();
    // The mailbox first: a message is there before the turn that takes it up is in the history.
    for (const change of (await source.mailbox?.changes()) ?? []) await emit({ type: "mail", change });
    const read = await source.history.read();
    if (read.missing && present) await emit({ type: "gone" });
    if (read.replaced) await emit({ type: "replaced" });
    present = !read.missing;
    for (const record of read.records) await emit({ type: "record", record });
    if (first) options.caughtUp?.();
    first = false;
    if (!running) return "ended";
    if (options.signal.aborted) return "stopped";
    await pause(options.everyMs, options.signal, () => {});
    if (options.signal.aborted) return "stopped";
  }
}
