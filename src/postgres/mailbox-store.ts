import { hostname } from "node:os";
import type { SQL } from "bun";
import { type AgentName, assertAgentName } from "../core/agent-name.ts";
import {
  AckConflictError,
  DuplicateMessageIdError,
  MailboxStorageError,
  MessageTooLargeError,
  StaleLeaseError,
} from "../core/errors.ts";
import { MAILBOX_STATES, type MailboxState } from "../core/mailbox-state.ts";
import { checkMailboxMessage } from "../core/message-check.ts";
import { assertMessageId, DEFAULT_MAX_CONTENT_BYTES, serializeMessage } from "../core/message-format.ts";
import type { MailboxMessage } from "../core/message.ts";
import { CheckedMessages } from "../mailbox/checked-messages.ts";
import { notInProcessing, storageError } from "../mailbox/failures.ts";
import type {
  AgentMailboxListing,
  ClaimFilter,
  FoundMessage,
  ListOptions,
  MailboxCounts,
  MailboxEntry,
  MailboxStore,
  PruneResult,
  RecoverResult,
} from "../mailbox/store.ts";
import { MAIL_CHANNEL, mailPayload } from "./mail-channel.ts";

/** How long a claim is held without a heartbeat before the message is ready again. */
export const DEFAULT_LEASE_MS = 30_000;

export interface PgMailboxStoreOptions {
  sql: SQL;
  /** The session whose mailboxes these are: every row is keyed by it. */
  session: string;
  maxContentBytes?: number;
  /** A claim's lease; renewed every third of it while this store holds the message. */
  leaseMs?: number;
  /** Names this store's claims in `lease_owner` (default host:pid:random). */
  owner?: string;
}

interface Row {
  id: string;
  agent: string;
  state: MailboxState;
  body: string;
  sender: string;
  kind: string;
  created_at_utc: string;
  size: number;
  reason: string | null;
}

/**
 * The `MailboxStore` on PostgreSQL: one row per message, its state a column,
 * FIFO by `(created_at_utc, id)`. A claim takes the oldest row that is ready — or
 * processing under a lease that expired — with `FOR UPDATE SKIP LOCKED`, and sets
 * a lease (owner, token, until) that this store renews while it holds the message.
 * `ack`, `release` and `quarantine` are fenced by the claim's token: from a lease
 * that is no longer current they fail with StaleLeaseError and change nothing.
 * Every statement is one transaction: a transition is all or nothing.
 */
export class PgMailboxStore implements MailboxStore {
  readonly #sql: SQL;
  readonly #session: string;
  readonly #leaseMs: number;
  readonly #owner: string;
  /** The lease token of each message this store claimed and has not finished. */
  readonly #leases = new Map<string, string>();
  readonly #checked = new CheckedMessages();
  #heartbeat: ReturnType<typeof setInterval> | undefined;

  readonly maxContentBytes: number;

  constructor(options: PgMailboxStoreOptions) {
    this.#sql = options.sql;
    this.#session = options.session;
    this.maxContentBytes = options.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    // The global crypto, not node:crypto: the bundle hoists a builtin's import to its
    // start, where node:crypto cost every command's start-up (test/cli/startup-modules).
    this.#owner = options.owner ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  }

  get owner(): string {
    return this.#owner;
  }

  async send(input: MailboxMessage): Promise<void> {
    const message = this.#sendable(input);
    try {
      await this.#insert(this.#sql, message);
    } catch (error) {
      throw sendError(message.id, error);
    }
  }

  /**
   * Sends `input` in one transaction with `alongside` (rows of another store in
   * the same database): the message is in ready exactly when those are written.
   */
  async sendAlong<T>(input: MailboxMessage, alongside: (tx: SQL) => Promise<T>): Promise<T> {
    const message = this.#sendable(input);
    let sent = false;
    try {
      return await this.#sql.begin(async (tx) => {
        await this.#insert(tx, message);
        sent = true;
        return alongside(tx);
      });
    } catch (error) {
      // What `alongside` threw is its own (it says what failed); the send's own failure is said as a send's.
      throw sent ? error : sendError(message.id, error);
    }
  }

  #sendable(input: MailboxMessage): MailboxMessage {
    const message = this.#checked.valid(input);
    const bytes = Buffer.byteLength(message.content, "utf8");
    if (bytes > this.maxContentBytes) throw new MessageTooLargeError(bytes, this.maxContentBytes);
    return message;
  }

  async #insert(sql: SQL, message: MailboxMessage): Promise<void> {
    const { id, recipient, sender, kind, createdAtUtc } = message;
    // The notification goes out when the insert commits, never before: a woken
    // claimer always finds the row.
    await sql`
      WITH sent AS (
        INSERT INTO agent_messages (session, id, agent, state, created_at_utc, sender, kind, body)
        VALUES (${this.#session}, ${id}, ${recipient}, 'ready', ${createdAtUtc}, ${sender}, ${kind}, ${serializeMessage(message)})
        RETURNING agent
      )
      SELECT pg_notify(${MAIL_CHANNEL}, ${mailPayload(this.#session, recipient)}) FROM sent`;
  }

  async claim(agentName: AgentName, only?: ClaimFilter): Promise<MailboxMessage | null> {
    const agent = assertAgentName(agentName);
    // Without a filter every kind and sender matches (the same statement, so one plan).
    const kind = only?.kind ?? null;
    const senders = this.#sql.array([...(only?.senders ?? [])], "TEXT");
    for (;;) {
      const token = crypto.randomUUID();
      let rows: { id: string; body: string }[];
      try {
        rows = await this.#sql`
          UPDATE agent_messages
          SET state = 'processing', lease_owner = ${this.#owner}, lease_token = ${token},
              lease_until = now() + ${this.#leaseMs} * interval '1 millisecond', updated_at = now()
          WHERE session = ${this.#session} AND id = (
            SELECT id FROM agent_messages
            WHERE session = ${this.#session} AND agent = ${agent}
              AND open
              AND (state = 'ready' OR lease_until < now())
              AND (${kind}::text IS NULL OR (kind = ${kind} AND sender = ANY(${senders})))
            ORDER BY created_at_utc, id
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
          RETURNING id, body`;
      } catch (error) {
        throw storageError(`claim for ${agent}`, error, "nothing was claimed");
      }
      const [row] = rows;
      if (!row) return null;
      const held = await this.#hold(row.id, row.body, token, agent);
      if (held) return held;
    }
  }

  /**
   * The fenced ack of `done` and the claim of `agent`'s next message in one
   * statement, so one transaction and one commit: the claim runs only if the ack
   * matched. When it did not (a message this store does not hold, a lease that is
   * no longer current, one already done), nothing changed and the pair runs as
   * `ack` then `claim`, with their outcomes and errors.
   */
  async ackAndClaim(input: MailboxMessage, agentName: AgentName): Promise<MailboxMessage | null> {
    const done = this.#checked.valid(input);
    const agent = assertAgentName(agentName);
    const held = this.#leases.get(done.id);
    if (held === undefined) return this.#ackThenClaim(done, agent);
    const token = crypto.randomUUID();
    let rows: { acked: boolean; id: string | null; body: string | null }[];
    try {
      // Every part of the statement sees one snapshot, where `done` is still
      // processing: were its lease out of time, the claim could pick it again, and
      // one row updated twice by one statement keeps either change. Hence `id <>`.
      rows = await this.#sql`
        WITH acked AS (
          UPDATE agent_messages
          SET state = 'done', reason = NULL, lease_owner = NULL, lease_token = NULL, lease_until = NULL, updated_at = now()
          WHERE session = ${this.#session} AND id = ${done.id} AND state = 'processing' AND lease_token = ${held}
          RETURNING id
        ), claimed AS (
          UPDATE agent_messages
          SET state = 'processing', lease_owner = ${this.#owner}, lease_token = ${token},
              lease_until = now() + ${this.#leaseMs} * interval '1 millisecond', updated_at = now()
          WHERE session = ${this.#session} AND EXISTS (SELECT 1 FROM acked) AND id = (
            SELECT id FROM agent_messages
            WHERE session = ${this.#session} AND agent = ${agent}
              AND open
              AND (state = 'ready' OR lease_until < now())
              AND id <> ${done.id}
            ORDER BY created_at_utc, id
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
          RETURNING id, body
        )
        SELECT EXISTS (SELECT 1 FROM acked) AS acked, claimed.id, claimed.body
        FROM (SELECT 1) AS one LEFT JOIN claimed ON true`;
    } catch (error) {
      throw storageError(`ack ${done.id} and claim for ${agent}`, error, "the message stays in processing and nothing was claimed");
    }
    const [row] = rows;
    if (!row?.acked) return this.#ackThenClaim(done, agent);
    this.#leases.delete(done.id);
    if (row.id === null || row.body === null) return null;
    return (await this.#hold(row.id, row.body, token, agent)) ?? this.claim(agent);
  }

  async #ackThenClaim(done: MailboxMessage, agent: AgentName): Promise<MailboxMessage | null> {
    await this.ack(done);
    return this.claim(agent);
  }

  async ack(input: MailboxMessage): Promise<void> {
    const message = this.#checked.valid(input);
    const token = this.#leases.get(message.id);
    if (token !== undefined && (await this.#transition(message.id, token, "done", null, "ack"))) return;
    // Not (or no longer) ours: fine only if the very same message is already done.
    const current = await this.#current(message.id, "ack");
    if (current?.state === "done") {
      this.#leases.delete(message.id);
      if (current.body === serializeMessage(message)) return;
      throw new AckConflictError(message.id);
    }
    throw this.#refusal(message, current, "ack");
  }

  async release(input: MailboxMessage): Promise<void> {
    const message = this.#checked.valid(input);
    const token = this.#leases.get(message.id);
    if (token !== undefined && (await this.#transition(message.id, token, "ready", null, "release"))) return;
    throw this.#refusal(message, await this.#current(message.id, "release"), "release");
  }

  async quarantine(input: MailboxMessage, reason: string): Promise<void> {
    const message = this.#checked.valid(input);
    const token = this.#leases.get(message.id);
    if (token !== undefined && (await this.#transition(message.id, token, "quarantine", reason, "quarantine"))) return;
    throw this.#refusal(message, await this.#current(message.id, "quarantine"), "quarantine");
  }

  /**
   * Every processing message of `agent` back to ready, leases or not: the caller
   * owns the agent now (a restarted runtime, `agent mailbox recover`). The old
   * claims' tokens are void, so a late ack from a consumer still alive is refused.
   */
  async recover(agentName: AgentName): Promise<RecoverResult> {
    const agent = assertAgentName(agentName);
    // The claims this store holds now: only those are voided below. One it makes while
    // the update is under way (its loop woken meanwhile) has a new token and keeps it.
    const before = new Map(this.#leases);
    let rows: { id: string; created_at_utc: string }[];
    try {
      rows = await this.#sql`
        UPDATE agent_messages
        SET state = 'ready', lease_owner = NULL, lease_token = NULL, lease_until = NULL, updated_at = now()
        WHERE session = ${this.#session} AND agent = ${agent} AND state = 'processing'
        RETURNING id, created_at_utc`;
    } catch (error) {
      throw storageError(`recover ${agent}`, error, "nothing was moved");
    }
    // Before the notification: a claim it wakes in this process must find its lease kept.
    for (const row of rows) if (this.#leases.get(row.id) === before.get(row.id)) this.#leases.delete(row.id);
    if (rows.length > 0) await this.#notify(agent);
    rows.sort((a, b) => (a.created_at_utc < b.created_at_utc ? -1 : a.created_at_utc > b.created_at_utc ? 1 : a.id < b.id ? -1 : 1));
    return { recovered: rows.map((row) => ({ agent, id: row.id })), skipped: [] };
  }

  async list(options: ListOptions = {}): Promise<AgentMailboxListing[]> {
    if (options.agent !== undefined) assertAgentName(options.agent);
    const agent = options.agent ?? null;
    const rows: Row[] = await this.#read(
      () => this.#sql`
        SELECT id, agent, state, sender, kind, created_at_utc, octet_length(body) AS size, reason
        FROM agent_messages
        WHERE session = ${this.#session} AND (${agent}::text IS NULL OR agent = ${agent})
        ORDER BY agent, created_at_utc, id`,
      "list",
    );
    const listings = new Map<string, AgentMailboxListing>();
    for (const row of rows) {
      let listing = listings.get(row.agent);
      if (!listing) {
        listing = { name: row.agent as AgentName, counts: zeroCounts(), messages: [] };
        listings.set(row.agent, listing);
      }
      listing.counts[row.state] += 1;
      if (options.state !== undefined && options.state !== row.state) continue;
      const entry: MailboxEntry = {
        id: row.id,
        file: `${row.id}.json`,
        state: row.state,
        sender: row.sender,
        kind: row.kind as MailboxEntry["kind"],
        createdAtUtc: row.created_at_utc,
        size: Number(row.size),
      };
      if (row.reason !== null) entry.reason = row.reason;
      listing.messages.push(entry);
    }
    return [...listings.values()];
  }

  async agents(): Promise<AgentName[]> {
    const rows: { agent: string }[] = await this.#read(
      () => this.#sql`SELECT DISTINCT agent FROM agent_messages WHERE session = ${this.#session} ORDER BY agent`,
      "list agents",
    );
    return rows.map((row) => row.agent as AgentName);
  }

  async find(id: string): Promise<FoundMessage | null> {
    assertMessageId(id);
    const rows: Row[] = await this.#read(
      () => this.#sql`SELECT id, agent, state, body, reason FROM agent_messages WHERE session = ${this.#session} AND id = ${id}`,
      `find ${id}`,
    );
    const [row] = rows;
    if (!row) return null;
    const checked = checkBody(row.body, row.id, row.agent as AgentName, Number.POSITIVE_INFINITY);
    const found: FoundMessage = { agent: row.agent as AgentName, state: row.state, file: `${row.id}.json`, message: checked.ok ? checked.message : null };
    if (!checked.ok) {
      found.raw = row.body;
      found.reason = checked.reason;
    }
    if (row.reason !== null) found.reason = row.reason;
    return found;
  }

  async prune(before: Date): Promise<PruneResult> {
    const rows: { agent: string; id: string }[] = await this.#read(
      () => this.#sql`
        DELETE FROM agent_messages
        WHERE session = ${this.#session} AND state = 'done' AND created_at_utc < ${before.toISOString()}
        RETURNING agent, id`,
      "prune",
    );
    return { pruned: rows.map((row) => ({ agent: row.agent as AgentName, id: row.id })), orphanMarkers: 0 };
  }

  /** Stops renewing leases (the messages still held are recovered by the next owner, or expire). */
  close(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  // ---- internals ----------------------------------------------------------

  /**
   * A row just claimed under `token`: checked as strictly as a file is, then held
   * (its lease renewed until it is finished). A row that fails the check (written
   * around the store) is quarantined with the reason: undefined, claim the next.
   */
  async #hold(id: string, body: string, token: string, agent: AgentName): Promise<MailboxMessage | undefined> {
    const checked = checkBody(body, id, agent, this.maxContentBytes);
    if (!checked.ok) {
      await this.#transition(id, token, "quarantine", checked.reason, "quarantine");
      return undefined;
    }
    this.#leases.set(id, token);
    this.#checked.remember(checked.message);
    this.#startHeartbeat();
    return checked.message;
  }

  /** One fenced transition of a message this store holds; false when the lease is no longer current. */
  async #transition(id: string, token: string, to: MailboxState, reason: string | null, op: string): Promise<boolean> {
    let rows: { agent: string }[];
    try {
      rows = await this.#sql`
        UPDATE agent_messages
        SET state = ${to}, reason = ${reason}, lease_owner = NULL, lease_token = NULL, lease_until = NULL, updated_at = now()
        WHERE session = ${this.#session} AND id = ${id} AND state = 'processing' AND lease_token = ${token}
        RETURNING agent`;
    } catch (error) {
      throw storageError(`${op} ${id}`, error, "the message stays in processing");
    }
    // Ready again: a claimer waiting for mail may take it.
    if (to === "ready" && rows[0]) await this.#notify(rows[0].agent);
    if (rows.length === 0) return false;
    // The heartbeat stays: a consumer claims again at once, and restarting a timer per
    // message cost more than the statement's parameters. A beat with nothing held stops it.
    this.#leases.delete(id);
    return true;
  }

  /** Best effort: the move is done; a lost wake-up is made up by the watchers' slow poll. */
  async #notify(agent: string): Promise<void> {
    await this.#sql.notify(MAIL_CHANNEL, mailPayload(this.#session, agent)).catch(() => {});
  }

  async #current(id: string, op: string): Promise<{ state: MailboxState; body: string } | undefined> {
    const rows: { state: MailboxState; body: string }[] = await this.#read(
      () => this.#sql`SELECT state, body FROM agent_messages WHERE session = ${this.#session} AND id = ${id}`,
      `${op} ${id}`,
    );
    return rows[0];
  }

  #refusal(message: MailboxMessage, current: { state: MailboxState } | undefined, op: string): MailboxStorageError {
    // Held by a claim that is not (or no longer) this store's: fenced off.
    if (current?.state === "processing" || (current?.state === "ready" && this.#leases.has(message.id))) {
      this.#leases.delete(message.id);
      return new StaleLeaseError(message.id, op);
    }
    this.#leases.delete(message.id);
    return notInProcessing(message, op);
  }

  async #read<T>(query: () => Promise<T>, what: string): Promise<T> {
    try {
      return await query();
    } catch (error) {
      throw storageError(what, error, "nothing was changed");
    }
  }

  #startHeartbeat(): void {
    if (this.#heartbeat) return;
    // While a message is worked on, its lease is renewed; a process that dies stops
    // renewing, and the message is ready again once the lease runs out.
    this.#heartbeat = setInterval(() => void this.#renew(), Math.max(50, Math.floor(this.#leaseMs / 3)));
    this.#heartbeat.unref?.();
  }

  async #renew(): Promise<void> {
    const tokens = [...this.#leases.values()];
    if (tokens.length === 0) return this.close();
    try {
      await this.#sql`
        UPDATE agent_messages SET lease_until = now() + ${this.#leaseMs} * interval '1 millisecond'
        WHERE session = ${this.#session} AND state = 'processing' AND lease_token = ANY(${this.#sql.array(tokens, "TEXT")})`;
    } catch {
      // The next beat tries again; a lease that runs out meanwhile is fenced at ack.
    }
  }
}

type Checked = { ok: true; message: MailboxMessage } | { ok: false; reason: string };

/** The strict check a claim makes of each row, as the file store checks each file. */
function checkBody(body: string, id: string, agent: AgentName, maxContentBytes: number): Checked {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: "body is not valid JSON" };
  }
  // The schema's verdict without zod (test/core/message-check.test.ts holds the two
  // together): zod's parse was the larger part of a claim's own CPU time.
  const parsed = checkMailboxMessage(json);
  if (!parsed.ok) return { ok: false, reason: `invalid message: ${parsed.problem}` };
  const message = parsed.message;
  if (message.id !== id) return { ok: false, reason: `id ${message.id} does not match its row's id ${id}` };
  if (message.recipient !== agent) return { ok: false, reason: `recipient ${message.recipient} does not match the mailbox ${agent}` };
  const bytes = Buffer.byteLength(message.content, "utf8");
  if (bytes > maxContentBytes) return { ok: false, reason: `content is ${bytes} bytes, over the cap of ${maxContentBytes}` };
  return { ok: true, message };
}

function zeroCounts(): MailboxCounts {
  return Object.fromEntries(MAILBOX_STATES.map((state) => [state, 0])) as MailboxCounts;
}

/** The SQLSTATE of a server error (`23505`: unique violation), from Bun's PostgresError. */
export function sqlState(error: unknown): string | undefined {
  const errno = (error as { errno?: unknown }).errno;
  return typeof errno === "string" ? errno : undefined;
}

/** A send that failed: a duplicate id, or the store's own failure. */
function sendError(id: string, error: unknown): Error {
  if (sqlState(error) === "23505") return new DuplicateMessageIdError(id);
  return storageError(`send ${id}`, error, "nothing was written");
}
