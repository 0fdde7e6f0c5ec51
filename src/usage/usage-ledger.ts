import { closeSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { redactValue } from "../security/redact.ts";
import { dirname, join } from "node:path";
import { type Clock, systemClock } from "../core/clock.ts";
import { CorruptStateFileError } from "../core/errors.ts";
import type { Usage } from "../model/types.ts";
import { FILE_MODE, ensureDir, fsyncDir, isErrno, pathExists } from "../storage/atomic-file.ts";
import { type UsageReport, callCost, summarise } from "./agent-usage.ts";
import type { Pricing } from "./pricing.ts";
import { UsageRecord } from "./usage-record.ts";

export const USAGE_FILE = "usage.jsonl";

/**
 * A session's usage: every model call and turn, appended to
 * `<state-dir>/usage.jsonl` as it happens, so totals survive restarts and add up
 * across `run`, `drain` and crashes. Keeps what this process added apart, for
 * the result of the command.
 *
 * Durability: a record is written (in the kernel, so a killed process loses
 * none) as it happens, but only a turn's record, and closing, fsync it — one
 * durable write per turn, not one more per model-call step beside the history's.
 * Usage is an account of the work, not the work: a power loss can take the model
 * calls of the turn in progress (the history still has the work itself), so a
 * budget may be overspent by at most that turn's calls after one.
 */
export class UsageLedger {
  readonly path: string;
  readonly #clock: Clock;
  readonly #onError: (error: Error) => void;
  readonly #earlier: UsageRecord[];
  readonly #added: UsageRecord[] = [];
  #fd: number | undefined;
  #failed = false;
  /** Written since the last fsync. */
  #unsynced = false;

  private constructor(path: string, earlier: UsageRecord[], clock: Clock, onError: (error: Error) => void) {
    this.path = path;
    this.#earlier = earlier;
    this.#clock = clock;
    this.#onError = onError;
  }

  /** The ledger of the state dir, read back (a half-written last line, left by a crash, is cut off). */
  static open(stateDir: string, options: { clock?: Clock; onError?: (error: Error) => void } = {}): UsageLedger {
    const path = join(stateDir, USAGE_FILE);
    return new UsageLedger(path, readUsageRecords(path, { repair: true }), options.clock ?? systemClock, options.onError ?? (() => {}));
  }

  recordModelCall(call: { agent: string; identity: string; model: string; usage: Usage; toolCalls: number; durationMs: number }): void {
    this.#add(false, {
      v: 1,
      type: "model_call",
      at: this.#clock.now().toISOString(),
      agent: call.agent,
      identity: call.identity,
      model: call.model,
      input_tokens: call.usage.inputTokens,
      output_tokens: call.usage.outputTokens,
      ...(call.usage.cachedInputTokens !== undefined ? { cached_input_tokens: call.usage.cachedInputTokens } : {}),
      tool_calls: call.toolCalls,
      duration_ms: Math.max(0, Math.round(call.durationMs)),
    });
  }

  recordTurn(turn: { agent: string; key: string; subtype: string; durationMs: number }): void {
    this.#add(true, {
      v: 1,
      type: "turn",
      at: this.#clock.now().toISOString(),
      agent: turn.agent,
      key: turn.key,
      subtype: turn.subtype,
      duration_ms: Math.max(0, Math.round(turn.durationMs)),
    });
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

  close(): void {
    if (this.#fd === undefined) return;
    try {
      if (this.#unsynced && !this.#failed) fsyncSync(this.#fd);
    } catch (error) {
      this.#onError(new Error(`could not record usage in ${this.path} (${(error as Error).message}); this run's figures are kept in memory only`));
    } finally {
      closeSync(this.#fd);
      this.#fd = undefined;
    }
  }

  /** Appends the record; `sync` makes it, and every record before it, durable. */
  #add(sync: boolean, unchecked: UsageRecord): void {
    // Masked like every file of the state: an agent's or a model's name is text from config and flags.
    const record = UsageRecord.parse(redactValue(unchecked));
    this.#added.push(record);
    // Usage is an account of the work, not the work: a full disk is reported
    // once, and the run goes on with the figures kept in memory.
    if (this.#failed) return;
    try {
      if (this.#fd === undefined) {
        ensureDir(dirname(this.path));
        const created = !pathExists(this.path);
        this.#fd = openSync(this.path, "a", FILE_MODE);
        if (created) fsyncDir(dirname(this.path));
      }
      const bytes = Buffer.from(`${JSON.stringify(record)}\n`, "utf8");
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(this.#fd, bytes, offset, bytes.length - offset);
      this.#unsynced = !sync;
      if (sync) fsyncSync(this.#fd);
    } catch (error) {
      this.#failed = true;
      this.#onError(new Error(`could not record usage in ${this.path} (${(error as Error).message}); this run's figures are kept in memory only`));
    }
  }
}

/**
 * Every record of a usage file, validated. A last line without its newline was
 * being written when a process died: cut off with `repair` (a runtime that will
 * append), skipped without (a reader). Any other bad line is a corrupt file.
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
  return lines.map((line, index) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new CorruptStateFileError(`${path}:${index + 1}`, "not valid JSON");
    }
    const parsed = UsageRecord.safeParse(json);
    if (!parsed.success) throw new CorruptStateFileError(`${path}:${index + 1}`, parsed.error.issues[0]?.message ?? "not a usage record");
    return parsed.data;
  });
}

/** A session's usage from its state dir, for readers beside a live runtime (nothing repaired). */
export function readSessionUsage(stateDir: string, pricing: Pricing): UsageReport {
  return summarise(readUsageRecords(join(stateDir, USAGE_FILE), { repair: false }), pricing);
}
