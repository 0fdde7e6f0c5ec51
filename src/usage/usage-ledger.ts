import { closeSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { redactValue } from "../security/redact.ts";
import { dirname, join } from "node:path";
import { type Clock, systemClock } from "../core/clock.ts";
import { CorruptStateFileError } from "../core/errors.ts";
import type { Usage } from "../model/types.ts";
import { FILE_MODE, ensureDir, fsyncDirOffLoop, fsyncOffLoop, isErrno, pathExists } from "../storage/atomic-file.ts";
import { type UsageReport, callCost, summarise } from "./agent-usage.ts";
import type { Pricing } from "./pricing.ts";
import { type UsageCarrier, UsageRecord } from "./usage-record.ts";
import { plainUsageRecord, usageRecordIdAt } from "./usage-record-check.ts";

export const USAGE_FILE = "usage.jsonl";

/**
 * A session's usage: every model call and turn, appended to
 * `<state-dir>/usage.jsonl` as it happens, so totals survive restarts and add up
 * across `run`, `drain` and crashes. Keeps what this process added apart, for
 * the result of the command.
 *
 * Durability: usage.jsonl is never fsynced while agents work. Each line is
 * written as it happens (in the kernel, so a killed process loses none), and the
 * record rides in the billed agent's next history append (`carrierOf`) — the
 * one durable write the step makes anyway. An OS crash can take usage.jsonl's
 * tail, never a history's: opening the ledger re-derives every record the
 * histories carry and the file lacks (`carried`), before the budget counts
 * anything. What no history carried by closing time (the last turns' busy
 * time) is fsynced once, off the event loop, on close; a subagent's calls
 * (its history is in memory) are fsynced as they come, off the loop.
 */
export class UsageLedger {
  readonly path: string;
  readonly #clock: Clock;
  readonly #onError: (error: Error) => void;
  readonly #earlier: UsageRecord[];
  readonly #added: UsageRecord[] = [];
  /** Records written to usage.jsonl that no history has carried yet, by billed agent. */
  readonly #unsettled = new Map<string, UsageRecord[]>();
  #fd: number | undefined;
  #failed = false;
  /** This process created usage.jsonl: its directory entry is made durable with the close's fsync. */
  #created = false;
  #dirSynced = false;
  /** The fsync under way for subagents' calls, and whether another is owed after it. */
  #syncing: Promise<void> | undefined;
  #again = false;

  private constructor(path: string, earlier: UsageRecord[], clock: Clock, onError: (error: Error) => void) {
    this.path = path;
    this.#earlier = earlier;
    this.#clock = clock;
    this.#onError = onError;
  }

  /**
   * The ledger of the state dir, read back (a half-written last line, left by a
   * crash, is cut off), with `carried` — the usage records the session's
   * histories hold, read BEFORE this opens the file, so that any line written
   * meanwhile by a live process is seen — re-derived where the file lacks them.
   */
  static open(stateDir: string, options: { clock?: Clock; onError?: (error: Error) => void; carried?: readonly UsageRecord[] } = {}): UsageLedger {
    const path = join(stateDir, USAGE_FILE);
    const earlier = readUsageRecords(path, { repair: true });
    const ledger = new UsageLedger(path, earlier, options.clock ?? systemClock, options.onError ?? (() => {}));
    const missing = missingRecords(earlier, options.carried ?? []);
    if (missing.length > 0) {
      earlier.push(...missing);
      // Not fsynced: the histories that carried them still hold them durably.
      ledger.#write(missing);
    }
    return ledger;
  }

  // A record's id is random, never from the runtime's id source: a test's
  // deterministic ids repeat from one process to the next, and two records of
  // one id count once.
  recordModelCall(call: { agent: string; identity: string; model: string; usage: Usage; toolCalls: number; durationMs: number }): void {
    this.#add({
      v: 1,
      type: "model_call",
      id: crypto.randomUUID(),
      at: this.#clock.now().toISOString(),
      agent: call.agent,
      identity: call.identity,
      model: call.model,
      input_tokens: call.usage.inputTokens,
      output_tokens: call.usage.outputTokens,
      ...(call.usage.cachedInputTokens !== undefined ? { cached_input_tokens: call.usage.cachedInputTokens } : {}),
      ...(call.usage.cacheWriteInputTokens !== undefined ? { cache_write_input_tokens: call.usage.cacheWriteInputTokens } : {}),
      tool_calls: call.toolCalls,
      duration_ms: Math.max(0, Math.round(call.durationMs)),
    });
  }

  recordTurn(turn: { agent: string; key: string; subtype: string; durationMs: number }): void {
    this.#add({
      v: 1,
      type: "turn",
      id: crypto.randomUUID(),
      at: this.#clock.now().toISOString(),
      agent: turn.agent,
      key: turn.key,
      subtype: turn.subtype,
      duration_ms: Math.max(0, Math.round(turn.durationMs)),
    });
  }

  /** What `agent`'s history carries into its next append: the records billed to it (its subagents' included) not yet durable. */
  carrierOf(agent: string): UsageCarrier {
    return {
      take: () => {
        const records = this.#unsettled.get(agent) ?? [];
        this.#unsettled.delete(agent);
        return records;
      },
      giveBack: (records) => {
        if (records.length > 0) this.#unsettled.set(agent, [...records, ...(this.#unsettled.get(agent) ?? [])]);
      },
    };
  }

  /** What this process added: the command's own usage. */
  run(pricing: Pricing): UsageReport {
    return summarise(this.#added, pricing);
  }

  /** The whole session, earlier processes included. */
  session(pricing: Pricing): UsageReport {
    return summarise([...this.#earlier, ...this.#added], pricing);
  }

  /** The session's spend at `pricing`; calls of unpriced models count nothing. */
  spentUsd(pricing: Pricing): number {
    let spent = 0;
    for (const record of [...this.#earlier, ...this.#added]) {
      if (record.type !== "model_call") continue;
      spent += callCost(record, pricing) ?? 0;
    }
    return spent;
  }

  /** Makes what no history carried durable (one fsync, off the event loop), then closes the file. */
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd === undefined) return;
    this.#fd = undefined;
    try {
      // A subagent's fsync under way ends on this descriptor before it is closed.
      await this.#syncing;
      if (this.#unsettled.size > 0 && !this.#failed) await this.#sync(fd);
      this.#unsettled.clear();
    } catch (error) {
      this.#onError(new Error(`could not record usage in ${this.path} (${(error as Error).message}); this run's figures are kept in memory only`));
    } finally {
      closeSync(fd);
    }
  }

  #add(unchecked: UsageRecord): void {
    // Masked like every file of the state: an agent's or a model's name is text from config and flags.
    const masked = redactValue(unchecked);
    const record = plainUsageRecord(masked) ?? UsageRecord.parse(masked);
    this.#added.push(record);
    this.#unsettled.set(record.agent, [...(this.#unsettled.get(record.agent) ?? []), record]);
    this.#write([record]);
    // A subagent's steps make no durable write of their own (its history is in
    // memory), and its calls ride on its parent's append only once the task
    // ends: its step's one durable write is this fsync, off the event loop.
    if (record.type === "model_call" && record.identity !== record.agent) this.#syncSoon();
  }

  /**
   * Group commit: one fsync at a time, and one more after it for whatever was
   * written while it ran. Nothing waits for it; a failure is told once.
   */
  #syncSoon(): void {
    if (this.#fd === undefined || this.#failed) return;
    if (this.#syncing) {
      this.#again = true;
      return;
    }
    const fd = this.#fd;
    this.#syncing = (async () => {
      do {
        this.#again = false;
        await this.#sync(fd);
      } while (this.#again);
    })()
      .catch((error) => {
        this.#failed = true;
        this.#onError(new Error(`could not record usage in ${this.path} (${(error as Error).message}); this run's figures are kept in memory only`));
      })
      .finally(() => {
        this.#syncing = undefined;
      });
  }

  async #sync(fd: number): Promise<void> {
    await fsyncOffLoop(fd);
    if (this.#created && !this.#dirSynced) {
      await fsyncDirOffLoop(dirname(this.path));
      this.#dirSynced = true;
    }
  }

  /** Appends the lines, unfsynced. */
  #write(records: readonly UsageRecord[]): void {
    // Usage is an account of the work, not the work: a full disk is reported
    // once, and the run goes on with the figures kept in memory (and in the
    // histories, from which the next runtime re-derives the file).
    if (this.#failed) return;
    try {
      if (this.#fd === undefined) {
        ensureDir(dirname(this.path));
        this.#created = !pathExists(this.path);
        this.#fd = openSync(this.path, "a", FILE_MODE);
      }
      const bytes = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(""), "utf8");
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      this.#failed = true;
      this.#onError(new Error(`could not record usage in ${this.path} (${(error as Error).message}); this run's figures are kept in memory only`));
    }
  }
}

/** The records of `carried` whose id `records` lacks (each once), in order. */
export function missingRecords(records: readonly UsageRecord[], carried: readonly UsageRecord[]): UsageRecord[] {
  const known = new Set<string>();
  for (const record of records) if (record.id !== undefined) known.add(record.id);
  const missing: UsageRecord[] = [];
  for (const record of carried) {
    if (record.id === undefined || known.has(record.id)) continue;
    known.add(record.id);
    missing.push(record);
  }
  return missing;
}

/**
 * Every record of a usage file, validated, each id once. A last line without its
 * newline was being written when a process died: cut off with `repair` (a
 * runtime that will append), skipped without (a reader). Any other bad line is
 * a corrupt file.
 */
export function readUsageRecords(path: string, options: { repair: boolean }): UsageRecord[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
  if (text.length > 0 && !text.endsWith("\n")) {
    const keep = text.lastIndexOf("\n") + 1;
    if (options.repair) truncateSync(path, Buffer.byteLength(text.slice(0, keep), "utf8"));
    text = text.slice(0, keep);
  }
  const lines = text.split("\n");
  lines.pop();
  const records: UsageRecord[] = [];
  const ids = new Set<string>();
  for (const [index, line] of lines.entries()) {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CorruptStateFileError(`${path}:${index + 1}`, "not valid JSON");
    }
    // The schema only for what the plain check does not take: a long session's
    // ledger is read at every resume, and zod cost several times the JSON.parse.
    let record = plainUsageRecord(json);
    if (record === undefined) {
      const parsed = UsageRecord.safeParse(json);
      if (!parsed.success) throw new CorruptStateFileError(`${path}:${index + 1}`, parsed.error.issues[0]?.message ?? "not a usage record");
      record = parsed.data;
    }
    // Two runtimes opening at once after an OS crash may both re-derive a record: it counts once.
    const id = record.id;
    if (id !== undefined && ids.has(id)) continue;
    if (id !== undefined) ids.add(id);
    records.push(record);
  }
  return records;
}

/**
 * The ids of the records usage.jsonl holds, read from its whole lines' text
 * without parsing them (a half-written last line, which opening the ledger cuts
 * off, counts for nothing): what the histories' carried records need not be
 * parsed for. Read before the histories, and the ledger after them: every
 * record a history carries was written to usage.jsonl first, so one written
 * meanwhile is seen by the ledger's read.
 */
export function ledgerIds(stateDir: string): Set<string> {
  const ids = new Set<string>();
  let text: string;
  try {
    text = readFileSync(join(stateDir, USAGE_FILE), "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return ids;
    throw error;
  }
  for (let start = 0, end = text.indexOf("\n"); end >= 0; start = end + 1, end = text.indexOf("\n", start)) {
    const id = usageRecordIdAt(text, start);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

/**
 * A session's usage records, for readers beside a live runtime (nothing
 * repaired or written): usage.jsonl's, and those the histories carry that it
 * lacks (an OS crash took them from its tail). `carried` is read first, for the
 * reason `UsageLedger.open` gives.
 */
export function readSessionRecords(stateDir: string, carried: readonly UsageRecord[]): UsageRecord[] {
  const records = readUsageRecords(join(stateDir, USAGE_FILE), { repair: false });
  return [...records, ...missingRecords(records, carried)];
}

/** A session's usage (see readSessionRecords). */
export function readSessionUsage(stateDir: string, pricing: Pricing, carried: readonly UsageRecord[]): UsageReport {
  return summarise(readSessionRecords(stateDir, carried), pricing);
}
