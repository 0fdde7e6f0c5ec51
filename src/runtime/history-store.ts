import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { AgentName } from "../core/agent-name.ts";
import { CorruptStateFileError, HistoryWriteError } from "../core/errors.ts";
import { UtcInstant } from "../core/message.ts";
import { ChatMessage } from "../model/types.ts";
import { ensureDir, FILE_MODE, fsyncDir, isErrno, pathExists } from "../storage/atomic-file.ts";
import { redactValue } from "../security/redact.ts";
import { RUN_SUBTYPES, type RunSubtype } from "./run-types.ts";

/**
 * One line of `<state-dir>/agents/<name>.jsonl`, the agent's canonical history.
 * The log is append-only; a `snapshot` (written by compaction) replaces
 * everything before it. `v` versions the record format.
 */
export const HistoryRecord = z.discriminatedUnion("type", [
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
]);
export type HistoryRecord = z.infer<typeof HistoryRecord>;

export type TurnStatus = "started" | "interrupted" | "finished";

/**
 * An agent's history on disk and in memory. Every append is written and fsynced
 * before it returns, so a later process sees exactly what this one had.
 */
export class HistoryStore {
  readonly path: string;
  #messages: ChatMessage[] = [];
  #turns = new Map<string, { status: TurnStatus; subtype?: RunSubtype; result?: string; joins?: string }>();
  /** The keys that joined each batched turn, by the turn's key. */
  #members = new Map<string, string[]>();
  #fd: number | undefined;
  #memoryOnly = false;
  /** Set when loading found and cut off a record a crash left half-written. */
  readonly repaired: string | undefined;

  private constructor(path: string, records: HistoryRecord[], repaired: string | undefined) {
    this.path = path;
    this.repaired = repaired;
    for (const record of records) this.#apply(record);
  }

  /** A history kept in memory only: a one-shot subagent's, which nothing resumes. */
  static inMemory(label: string): HistoryStore {
    const store = new HistoryStore(`(memory:${label})`, [], undefined);
    store.#memoryOnly = true;
    return store;
  }

  /** Opens (creating if needed) the history of `agent` under `stateDir` and reads it back, validated. */
  static open(stateDir: string, agent: AgentName): HistoryStore {
    const dir = join(stateDir, "agents");
    ensureDir(dir);
    const path = join(dir, `${agent}.jsonl`);
    const { records, repaired } = readRecords(path, { repair: true });
    return new HistoryStore(path, records, repaired);
  }

  /** The conversation so far (without the system prompt). */
  get messages(): readonly ChatMessage[] {
    return this.#messages;
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
   * Starts turn `key` with its opening messages in one durable write, so a crash
   * leaves either both (the turn can be resumed) or neither.
   */
  beginTurn(key: string, messages: ChatMessage[], at: Date): void {
    const time = at.toISOString();
    this.#append([
      { v: 1, type: "turn", at: time, key, status: "started" },
      ...messages.map((message) => ({ v: 1 as const, type: "message" as const, at: time, message })),
    ]);
  }

  /**
   * Adds `key` (an event) with its messages to the turn `turn`, which is started
   * and not finished, in one durable write: one model turn will answer both.
   */
  joinTurn(key: string, turn: string, messages: ChatMessage[], at: Date): void {
    const joined = this.#turns.get(turn);
    if (joined === undefined || joined.status === "finished" || joined.joins !== undefined) {
      throw new Error(`history ${this.path}: ${key} cannot join turn ${turn}, which is ${joined?.status ?? "unknown"}${joined?.joins ? " (itself a joined one)" : ""}`);
    }
    const time = at.toISOString();
    this.#append([
      { v: 1, type: "turn", at: time, key, status: "started", joins: turn },
      ...messages.map((message) => ({ v: 1 as const, type: "message" as const, at: time, message })),
    ]);
  }

  /** The key of the model turn that answers `key`: the turn it joined, or itself. */
  turnOf(key: string): string {
    return this.#turns.get(key)?.joins ?? key;
  }

  /** Turns whose process died in them (started, never interrupted or finished), oldest first; joined keys are their turn's. */
  abandonedTurns(): string[] {
    return [...this.#turns].filter(([, turn]) => turn.status === "started" && turn.joins === undefined).map(([key]) => key);
  }

  /** Marks turn `key` interrupted, with every key that joined it, in one write. */
  interruptTurn(key: string, at: Date): void {
    this.#append(this.#withMembers(key).map((each) => ({ v: 1 as const, type: "turn" as const, at: at.toISOString(), key: each, status: "interrupted" as const })));
  }

  /** Marks turn `key` finished, with every key that joined it, in one write: none of them is answered again. */
  finishTurn(key: string, at: Date, subtype: RunSubtype, result: string): void {
    this.#append(
      this.#withMembers(key).map((each) => ({ v: 1 as const, type: "turn" as const, at: at.toISOString(), key: each, status: "finished" as const, subtype, result })),
    );
  }

  #withMembers(key: string): string[] {
    return [key, ...(this.#members.get(key) ?? []).filter((member) => this.#turns.get(member)?.status !== "finished")];
  }

  appendMessages(messages: ChatMessage[], at: Date): void {
    this.#append(messages.map((message) => ({ v: 1, type: "message", at: at.toISOString(), message })));
  }

  /** Replaces the whole history (compaction). */
  snapshot(messages: ChatMessage[], at: Date): void {
    this.#append([{ v: 1, type: "snapshot", at: at.toISOString(), messages }]);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #append(unsafe: HistoryRecord[]): void {
    // Memory and disk get the same masked records, so a resumed run sees what this one saw.
    const records = redactValue(unsafe);
    if (this.#memoryOnly) {
      for (const record of records) this.#apply(HistoryRecord.parse(record));
      return;
    }
    if (this.#fd === undefined) {
      const created = !pathExists(this.path);
      this.#fd = openSync(this.path, "a", FILE_MODE);
      if (created) fsyncDir(dirname(this.path));
    }
    const text = records.map((record) => `${JSON.stringify(HistoryRecord.parse(record))}\n`).join("");
    const bytes = Buffer.from(text, "utf8");
    const fd = this.#fd;
    const size = fstatSync(fd).size;
    try {
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      fsyncSync(fd);
    } catch (error) {
      // A write that failed part-way (ENOSPC, EFBIG, EIO) leaves half a record:
      // cut the file back to the last whole one, so nothing later reads it as a
      // crash's leftover, and the in-memory history still matches the file.
      let cutBack = false;
      try {
        ftruncateSync(fd, size);
        fsyncSync(fd);
        cutBack = true;
      } catch {
        // Reported below: the next open cuts the half record off.
      }
      throw new HistoryWriteError(this.path, error, cutBack);
    }
    for (const record of records) this.#apply(record);
  }

  #apply(record: HistoryRecord): void {
    if (record.type === "message") this.#messages.push(record.message);
    else if (record.type === "snapshot") this.#messages = [...record.messages];
    else {
      const joins = record.joins ?? this.#turns.get(record.key)?.joins;
      this.#turns.set(record.key, { status: record.status, subtype: record.subtype, result: record.result, ...(joins !== undefined ? { joins } : {}) });
      if (record.joins !== undefined) this.#members.set(record.joins, [...(this.#members.get(record.joins) ?? []), record.key]);
    }
  }
}

/**
 * Reads and validates every record. A last line without its newline is a record
 * whose append never returned (the process died writing it): with `repair` (the
 * runtime that will append) it is cut off and the cut reported; without (a
 * reader, perhaps beside a live runtime) it is skipped. Any other bad line means
 * the file cannot be trusted.
 */
export function readRecords(path: string, options: { repair: boolean }): { records: HistoryRecord[]; repaired: string | undefined } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return { records: [], repaired: undefined };
    throw error;
  }
  let repaired: string | undefined;
  if (text.length > 0 && !text.endsWith("\n")) {
    const keep = text.lastIndexOf("\n") + 1;
    if (options.repair) {
      repaired = `${path}: removed a half-written last record (${text.length - keep} bytes) left by a process that stopped while writing it`;
      truncateSync(path, Buffer.byteLength(text.slice(0, keep), "utf8"));
    }
    text = text.slice(0, keep);
  }
  const records: HistoryRecord[] = [];
  const lines = text.split("\n");
  lines.pop();
  for (const [index, line] of lines.entries()) {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CorruptStateFileError(`${path}:${index + 1}`, "not valid JSON");
    }
    const parsed = HistoryRecord.safeParse(json);
    if (!parsed.success) {
      throw new CorruptStateFileError(`${path}:${index + 1}`, parsed.error.issues[0]?.message ?? "not a valid history record");
    }
    records.push(parsed.data);
  }
  return { records, repaired };
}
