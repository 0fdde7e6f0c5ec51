import { z } from "zod";
import type { AgentName } from "../core/agent-name.ts";
import { UtcInstant } from "../core/message.ts";
import { ChatMessage } from "../model/types.ts";
import { redactValue } from "../security/redact.ts";
import { type UsageCarrier, UsageRecord } from "../usage/usage-record.ts";
import { usageRecordIdAt } from "../usage/usage-record-check.ts";
import { RUN_SUBTYPES, type RunSubtype } from "./run-types.ts";
import { lazySchema } from "../core/lazy-schema.ts";
import { plainChatMessage, plainHistoryRecord } from "./history-record-check.ts";
import { messageSize, sizeOf } from "./history-size.ts";

/**
 * One record of an agent's canonical history (a line of `agents/<name>.jsonl`
 * in the file backend, a row in PostgreSQL). The log is append-only; a
 * `snapshot` (written by compaction) replaces everything before it. `v`
 * versions the record format.
 */
export const HistoryRecord = lazySchema(() =>
  z.discriminatedUnion("type", [
    z.strictObject({ v: z.literal(1), type: z.literal("message"), at: UtcInstant, message: ChatMessage }),
    z.strictObject({ v: z.literal(1), type: z.literal("snapshot"), at: UtcInstant, messages: z.array(ChatMessage) }),
    z.strictObject({
      v: z.literal(1),
      type: z.literal("turn"),
      at: UtcInstant,
      key: z.string().min(1),
      // "interrupted": stopped on purpose (a cancel, a shutdown) — resumed only when
      // the same key is run again; "started" with nothing after it: the process died.
      status: z.enum(["started", "interrupted", "finished"]),
      subtype: z.enum(RUN_SUBTYPES).optional(),
      /** The final text of a finished turn: what a repeated run with the same key returns. */
      result: z.string().optional(),
      /**
       * Set on the "started" record of an event answered in the model turn of
       * another (a batched event turn): that turn's key. Its later records follow
       * the joined turn's, and only that turn is resumed after a crash.
       */
      joins: z.string().min(1).optional(),
    }),
    /**
     * A usage record (a model call or a turn billed to this agent) carried in an
     * append the step made anyway, so it is durable with it: usage.jsonl is
     * re-derived from these when an OS crash took its unfsynced tail.
     */
    z.strictObject({ v: z.literal(1), type: z.literal("usage"), at: UtcInstant, record: UsageRecord }),
  ]),
);
export type HistoryRecord = z.infer<typeof HistoryRecord>;

export type TurnStatus = "started" | "interrupted" | "finished";

/** How a usage record carried in a history begins as JSON: readers looking for them match lines on it. */
export const USAGE_RECORD_PREFIX = '{"v":1,"type":"usage",';
/**
 * The id of the usage record a history's usage line (at `start` of `text`)
 * carries, read from its text as the writer lays it out; undefined when it is
 * laid out otherwise (its record then parsed, as one without an id is).
 */
export function carriedUsageId(text: string, start: number): string | undefined {
  const at = start + USAGE_RECORD_PREFIX.length;
  if (!text.startsWith(USAGE_RECORD_PREFIX, start) || !text.startsWith('"at":"', at)) return undefined;
  // The instant holds no quote: the first one after it ends it.
  const close = text.indexOf('"', at + 6);
  return close >= 0 && text.startsWith('","record":', close) ? usageRecordIdAt(text, close + '","record":'.length) : undefined;
}

/** How the other kinds begin as JSON.stringify writes them (their schema's key order): what an open matches on. */
export const MESSAGE_RECORD_PREFIX = '{"v":1,"type":"message",';
export const SNAPSHOT_RECORD_PREFIX = '{"v":1,"type":"snapshot",';

/**
 * A record read back from a backend, checked: by plainHistoryRecord when it
 * recognises it (every record this program writes), else by the schema, whose
 * verdict (and message, when it refuses) stands.
 */
export function checkRecord(json: unknown): z.ZodSafeParseResult<HistoryRecord> {
  const plain = plainHistoryRecord(json);
  return plain !== undefined ? { success: true, data: plain } : HistoryRecord.safeParse(json);
}

/**
 * Where one agent's records go. `append` returns only once the records are
 * durable (fsynced, committed): the runtime acknowledges an event after its
 * history append returns, and must never acknowledge what a crash could lose.
 * An append that throws has stored none of its records.
 */
/** How an append is stored. */
export interface AppendOptions {
  /**
   * False: written, but not waited on the disk for (no fsync): the next durable
   * append of the same log makes it durable with itself, in order. For what a
   * crash may lose because nothing was acted on (see AgentRunner's read-only
   * steps). A backend may store it durably all the same.
   */
  durable?: boolean;
}

export interface HistoryLog {
  /** Where the records live, for messages: a path, or the store and agent. */
  readonly location: string;
  append(records: readonly HistoryRecord[], options?: AppendOptions): Promise<void>;
  close(): void;
}

/** An opened history: the records read back, and the log later records go to. */
export interface OpenedHistory {
  /**
   * The records a HistoryStore applies, checked, in order: every turn mark, the
   * last snapshot and the messages after it. What that snapshot replaced (the
   * messages and snapshots before it) and the usage records (carriedUsage reads
   * and checks those at every runtime's start) may be left out unparsed: a
   * 5 000-turn session's resume read every line through the schema for nothing.
   */
  records: HistoryRecord[];
  log: HistoryLog;
  /** Set when opening found and cut off a record a crash left half-written. */
  repaired?: string;
}

/**
 * Every agent history of one session, in one backend (files or PostgreSQL).
 * The runtime sees only this and HistoryStore, never the backend.
 */
export interface HistoryBackend {
  /** Opens (creating if needed) the history of `agent` for appending, reading it back validated. */
  open(agent: AgentName): Promise<OpenedHistory>;
  /**
   * Moves `agent`'s history aside (its name freed, what it did kept); returns
   * where it went, or undefined when it had none.
   */
  archive(agent: AgentName, at: Date): Promise<string | undefined>;
  /** Whether a history of this name was archived before. */
  wasArchived(agent: AgentName): Promise<boolean>;
  /** The agents that have a history (not the archived ones), sorted; creates nothing. */
  agents(): Promise<string[]>;
  /**
   * `agent`'s records, read only: nothing created or repaired (a reader may run
   * beside a live runtime), a half-written last record skipped.
   */
  read(agent: string): Promise<HistoryRecord[]>;
  /**
   * The usage records every history of the session carries, archived ones
   * included; read only. Those whose id is in `known` (usage.jsonl has them)
   * are left out, their lines not parsed.
   */
  carriedUsage(known?: ReadonlySet<string>): Promise<UsageRecord[]>;
}

/** `message` as an append stores it (masked, validated): what the model is sent for it from then on. */
export function asStored(message: ChatMessage): ChatMessage {
  const masked = redactValue(message);
  return plainChatMessage(masked) ?? ChatMessage.parse(masked);
}

/**
 * An agent's history in memory, over its durable log. Every append is stored
 * before it resolves and only then applied in memory, so a later process sees
 * exactly what this one had.
 */
export class HistoryStore {
  readonly #log: HistoryLog;
  #messages: ChatMessage[] = [];
  /** sizeOf(#messages), kept as they change: a step of a long session asks for it twice. */
  #size = 0;
  #turns = new Map<string, { status: TurnStatus; subtype?: RunSubtype; result?: string; joins?: string }>();
  /** The keys that joined each batched turn, by the turn's key. */
  #members = new Map<string, string[]>();
  /** Appends run one after another: a record stored later is never applied earlier. */
  #tail: Promise<void> = Promise.resolve();
  /** Set when loading found and cut off a record a crash left half-written. */
  readonly repaired: string | undefined;

  #refusal: (() => Error | undefined) | undefined;
  readonly #onClose: (() => void) | undefined;
  #riders: UsageCarrier | undefined;

  /** `onClose` is told when the history is closed (the runtime stops holding it). */
  constructor(opened: OpenedHistory, onClose?: () => void) {
    this.#log = opened.log;
    this.#onClose = onClose;
    this.repaired = opened.repaired;
    for (const record of opened.records) this.#apply(record);
  }

  /** A history kept in memory only: a one-shot subagent's, which nothing resumes. */
  static inMemory(label: string): HistoryStore {
    return new HistoryStore({ records: [], log: new MemoryHistoryLog(`(memory:${label})`) });
  }

  /** Opens `agent`'s history in `backend`; `onClose` is told when it is closed. */
  static async open(backend: HistoryBackend, agent: AgentName, onClose?: () => void): Promise<HistoryStore> {
    return new HistoryStore(await backend.open(agent), onClose);
  }

  /** Where the records live (a path for the file backend). */
  get path(): string {
    return this.#log.location;
  }

  /** The conversation so far (without the system prompt). */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
  }

  /** The conversation's size as compaction measures it (sizeOf of `messages`), without a pass over it. */
  get size(): number {
    return this.#size;
  }

  turnStatus(key: string): TurnStatus | undefined {
    return this.#turns.get(key)?.status;
  }

  /** How a finished turn ended, as recorded. */
  finishedTurn(key: string): { subtype: RunSubtype; result: string } | undefined {
    const turn = this.#turns.get(key);
    if (turn?.status !== "finished") return undefined;
    return { subtype: turn.subtype ?? "success", result: turn.result ?? "" };
  }

  /**
   * Adds `key` (an event) with its messages to the turn `turn`, which is started
   * and not finished, in one durable write: one model turn will answer both.
   */
  async joinTurn(key: string, turn: string, messages: ChatMessage[], at: Date): Promise<void> {
    const joined = this.#turns.get(turn);
    if (joined === undefined || joined.status === "finished" || joined.joins !== undefined) {
      throw new Error(`history ${this.path}: ${key} cannot join turn ${turn}, which is ${joined?.status ?? "unknown"}${joined?.joins ? " (itself a joined one)" : ""}`);
    }
    const time = at.toISOString();
    await this.#append([
      { v: 1, type: "turn", at: time, key, status: "started", joins: turn },
      ...messages.map((message) => ({ v: 1 as const, type: "message" as const, at: time, message })),
    ]);
  }

  /**
   * Takes in several events in one durable write: each `key` with its opening
   * messages joins `turn`, which is started and not finished; with no `turn`,
   * the first event begins a new turn and the others join it.
   */
  async openEvents(turn: string | undefined, events: { key: string; messages: ChatMessage[] }[], at: Date): Promise<void> {
    const first = events[0];
    if (first === undefined) return;
    const into = turn ?? first.key;
    const joined = this.#turns.get(into);
    if (turn !== undefined && (joined === undefined || joined.status === "finished" || joined.joins !== undefined)) {
      throw new Error(`history ${this.path}: events cannot join turn ${turn}, which is ${joined?.status ?? "unknown"}${joined?.joins ? " (itself a joined one)" : ""}`);
    }
    const time = at.toISOString();
    const records: HistoryRecord[] = [];
    for (const { key, messages } of events) {
      const begins = turn === undefined && key === first.key;
      records.push({ v: 1, type: "turn", at: time, key, status: "started", ...(begins ? {} : { joins: into }) });
      for (const message of messages) records.push({ v: 1, type: "message", at: time, message });
    }
    await this.#append(records);
  }

  /** The key of the model turn that answers `key`: the turn it joined, or itself. */
  turnOf(key: string): string {
    return this.#turns.get(key)?.joins ?? key;
  }

  /** The keys that joined turn `turn` (events of its batch, messages taken mid-turn), in the order they came. */
  joinedTo(turn: string): readonly string[] {
    return this.#members.get(turn) ?? [];
  }

  /** Turns whose process died in them (started, never interrupted or finished), oldest first; joined keys are their turn's. */
  abandonedTurns(): string[] {
    return [...this.#turns].filter(([, turn]) => turn.status === "started" && turn.joins === undefined).map(([key]) => key);
  }

  /**
   * Starts turn `key` with its opening messages in one durable write, so a crash
   * leaves either both (the turn can be resumed) or neither.
   */
  beginTurn(key: string, messages: ChatMessage[], at: Date, options?: AppendOptions): Promise<void> {
    const time = at.toISOString();
    return this.#append(
      [
        { v: 1, type: "turn", at: time, key, status: "started" },
        ...messages.map((message) => ({ v: 1 as const, type: "message" as const, at: time, message })),
      ],
      options,
    );
  }

  /** Marks turn `key` interrupted, with every key that joined it, in one write. */
  interruptTurn(key: string, at: Date): Promise<void> {
    return this.#append(this.#withMembers(key).map((each) => ({ v: 1 as const, type: "turn" as const, at: at.toISOString(), key: each, status: "interrupted" as const })));
  }

  /** Marks turn `key` finished, with every key that joined it, in one write: none of them is answered again. */
  finishTurn(key: string, at: Date, subtype: RunSubtype, result: string): Promise<void> {
    return this.#append(
      this.#withMembers(key).map((each) => ({ v: 1 as const, type: "turn" as const, at: at.toISOString(), key: each, status: "finished" as const, subtype, result })),
    );
  }

  #withMembers(key: string): string[] {
    return [key, ...(this.#members.get(key) ?? []).filter((member) => this.#turns.get(member)?.status !== "finished")];
  }

  appendMessages(messages: ChatMessage[], at: Date, options?: AppendOptions): Promise<void> {
    return this.#append(
      messages.map((message) => ({ v: 1, type: "message", at: at.toISOString(), message })),
      options,
    );
  }

  /** Replaces the whole history (compaction). */
  snapshot(messages: ChatMessage[], at: Date): Promise<void> {
    return this.#append([{ v: 1, type: "snapshot", at: at.toISOString(), messages }]);
  }

  close(): void {
    this.#log.close();
    this.#onClose?.();
  }

  /**
   * Refuses every later append with the error `refusal` returns (undefined: go on).
   * A teammate's history is written only while this process holds the teammate:
   * a turn stopped after its lease was taken over must not record even that it
   * was interrupted, or its write could land before the new holder's and make the
   * new holder's next append the one that conflicts.
   */
  guardWrites(refusal: () => Error | undefined): void {
    this.#refusal = refusal;
  }

  /**
   * Every later append also carries what `carrier` has waiting: the agent's
   * usage records ride on the durable write its step makes anyway.
   */
  carryUsage(carrier: UsageCarrier): void {
    this.#riders = carrier;
  }

  #append(unsafe: HistoryRecord[], options?: AppendOptions): Promise<void> {
    const refused = this.#refusal?.();
    if (refused) return Promise.reject(refused);
    // Memory and the log get the same masked, validated records, so a resumed
    // run sees what this one saw, and no backend stores what it could not read.
    const records = redactValue(unsafe).map((record) => plainHistoryRecord(record) ?? HistoryRecord.parse(record));
    const stored = this.#tail.then(async () => {
      // Taken as the write starts, so a record made while an earlier append
      // waited rides on this one; the usage ledger validated and masked them.
      // An append not waited on the disk for (a reading step's model reply)
      // carries them too: the step's next, durable append makes them durable
      // with the reply, and a crash before it loses the reply as well.
      const riders = this.#riders?.take() ?? [];
      const carried: HistoryRecord[] = riders.map((record) => ({ v: 1, type: "usage", at: records[0]?.at ?? record.at, record }));
      try {
        await this.#log.append(carried.length > 0 ? [...records, ...carried] : records, options);
      } catch (error) {
        this.#riders?.giveBack(riders);
        throw error;
      }
      for (const record of records) this.#apply(record);
    });
    // A failed append does not block the next one; its caller sees the error.
    this.#tail = stored.catch(() => {});
    return stored;
  }

  #apply(record: HistoryRecord): void {
    if (record.type === "message") {
      this.#messages.push(record.message);
      this.#size += messageSize(record.message);
    } else if (record.type === "snapshot") {
      this.#messages = [...record.messages];
      this.#size = sizeOf(this.#messages);
    }
    else if (record.type === "turn") {
      const joins = record.joins ?? this.#turns.get(record.key)?.joins;
      this.#turns.set(record.key, { status: record.status, subtype: record.subtype, result: record.result, ...(joins !== undefined ? { joins } : {}) });
      if (record.joins !== undefined) this.#members.set(record.joins, [...(this.#members.get(record.joins) ?? []), record.key]);
    }
  }
}

/** The log of a history nothing resumes: it stores nothing. */
class MemoryHistoryLog implements HistoryLog {
  constructor(readonly location: string) {}
  async append(): Promise<void> {}
  close(): void {}
}
