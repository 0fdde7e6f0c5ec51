import type { AgentName } from "../core/agent-name.ts";
import type { MailboxState } from "../core/mailbox-state.ts";
import type { MailboxMessage, MessageKind } from "../core/message.ts";

/** One entry of a mailbox as an operator sees it. Content only comes with `show`. */
export interface MailboxEntry {
  /** The message id, or null for a quarantined file that is not a readable message. */
  id: string | null;
  file: string;
  state: MailboxState;
  sender: string | null;
  kind: MessageKind | null;
  createdAtUtc: string | null;
  size: number;
  /** Why it was quarantined (quarantine only). */
  reason?: string;
}

export type MailboxCounts = Record<MailboxState, number>;

export interface AgentMailboxListing {
  name: AgentName;
  counts: MailboxCounts;
  messages: MailboxEntry[];
}

export interface ListOptions {
  agent?: AgentName;
  state?: MailboxState;
}

export interface FoundMessage {
  agent: AgentName;
  state: MailboxState;
  file: string;
  message: MailboxMessage | null;
  /** Raw text when the file is not a valid message (quarantine). */
  raw?: string;
  reason?: string;
}

export interface RecoverResult {
  recovered: { agent: AgentName; id: string }[];
  skipped: { agent: AgentName; file: string; reason: string }[];
}

export interface PruneResult {
  pruned: { agent: AgentName; id: string }[];
  /** Id markers removed because no message file was linked to them any more. */
  orphanMarkers: number;
}

/** Which messages a claim may take: of this kind, from one of these senders. */
export interface ClaimFilter {
  kind: MessageKind;
  senders: readonly AgentName[];
}

/** Whether `message` is one `only` lets a claim take (every message without a filter). */
export function claimable(message: { kind: string; sender: string }, only: ClaimFilter | undefined): boolean {
  return only === undefined || (message.kind === only.kind && only.senders.includes(message.sender));
}

/**
 * The durable mailbox: one file per message, its state the directory it is in.
 * Every transition is one atomic rename under both locks; a failed transition
 * leaves the source where it was.
 */
export interface MailboxStore {
  /** The cap on a message's content in UTF-8 bytes (mailbox.maxContentBytes): a larger send is refused. */
  readonly maxContentBytes: number;
  /** Durably places `message` in its recipient's `ready/`. Fails on a duplicate id anywhere. */
  send(message: MailboxMessage): Promise<void>;
  /**
   * Whether sends called one after another without awaiting are made in call
   * order, together in one durable step (group commit): a caller may start two
   * at once and still have the first land no later than the second. Without it
   * a caller that needs the order awaits each send before the next.
   */
  readonly sendsInCallOrder?: boolean;
  /**
   * `send` and `claim` of that message as one durable step: it goes straight
   * into `processing/`, for a recipient whose sender runs it and takes it at once
   * (a spawned teammate's first task: one move and one fsync fewer before it
   * starts). Optional: without it a caller sends, and the recipient claims.
   */
  sendClaimed?(message: MailboxMessage): Promise<void>;
  /**
   * Moves the oldest valid ready message to `processing/` and returns it; null
   * when none. With `only`, the oldest of those that match it: the others stay
   * in ready/, in their order (a turn in progress takes just a user's word).
   */
  claim(agent: AgentName, only?: ClaimFilter): Promise<MailboxMessage | null>;
  /**
   * Up to `limit` claims of `agent`'s oldest ready messages made as one durable
   * step, oldest first (empty when none): the Lead taking in 64 messages pays one
   * commit, not 64. Optional: without it a caller claims one at a time.
   */
  claimMany?(agent: AgentName, limit: number): Promise<MailboxMessage[]>;
  /** `processing/` → `done/`; idempotent for an identical message already done. */
  ack(message: MailboxMessage): Promise<void>;
  /**
   * `ack(done)` then `claim(agent)`, as one step where the backend can (one
   * transaction, one commit on PostgreSQL): a consumer finishing a message and
   * taking the next pays one durable write for both. The result is exactly the
   * pair's: an ack that fails throws as `ack` does and claims nothing; once the
   * ack landed, the claim's result (null when the mailbox is empty).
   */
  ackAndClaim(done: MailboxMessage, agent: AgentName): Promise<MailboxMessage | null>;
  /** `processing/` → `ready/`. */
  release(message: MailboxMessage): Promise<void>;
  /** `processing/` → `quarantine/` under a fresh name, with `reason` recorded beside it. */
  quarantine(message: MailboxMessage, reason: string): Promise<void>;
  /** Every message in the agent's `processing/` back to `ready/` (at-least-once after a crash). */
  recover(agent: AgentName): Promise<RecoverResult>;
  /**
   * Makes what a new agent's mailbox needs (its directories) ahead of its first
   * send, so a spawn can do it at the same time as its other steps; the send
   * still makes it if this was not called. Optional: a store with nothing to
   * make has no such step.
   */
  prepare?(agent: AgentName): Promise<void>;
  /**
   * This process will send about `count` messages soon (a teammate starting a
   * turn: its result, then its idle notice): what those sends make can be made
   * now, in the background, off their path. Optional: a store with nothing to
   * make ahead has no such step.
   */
  reserve?(count: number): void;
  /** Agents with a mailbox, their counts per state and their messages. */
  list(options?: ListOptions): Promise<AgentMailboxListing[]>;
  /** The names of agents that have a mailbox. */
  agents(): Promise<AgentName[]>;
  /** Finds one message by id in any agent and state. */
  find(id: string): Promise<FoundMessage | null>;
  /** Deletes done messages created before `before`, and orphan id markers older than it. */
  prune(before: Date): Promise<PruneResult>;
}
