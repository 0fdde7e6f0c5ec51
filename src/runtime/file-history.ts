import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, readdirSync, readFileSync, renameSync, truncateSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { CorruptStateFileError, HistoryWriteError } from "../core/errors.ts";
import { ensureDir, FILE_MODE, openWhereCheap, fsyncDirOffLoop, fsyncOffLoop, isErrno, pathExists } from "../storage/atomic-file.ts";
import type { UsageRecord } from "../usage/usage-record.ts";
import {
  type AppendOptions,
  carriedUsageId,
  checkRecord,
  type HistoryBackend,
  type HistoryLog,
  type HistoryRecord,
  HistoryStore,
  MESSAGE_RECORD_PREFIX,
  type OpenedHistory,
  SNAPSHOT_RECORD_PREFIX,
  USAGE_RECORD_PREFIX,
} from "./history-store.ts";

/**
 * The file backend of histories: `<state-dir>/agents/<name>.jsonl`, one JSON
 * record a line, appended and fsynced; archived ones under `agents/removed/`.
 */
export class FileHistoryBackend implements HistoryBackend {
  constructor(readonly stateDir: string) {}

  pathOf(agent: string): string {
    return join(this.stateDir, "agents", `${agent}.jsonl`);
  }

  async open(agent: AgentName): Promise<OpenedHistory> {
    return this.openNow(agent);
  }

  /** `open`, for callers that cannot wait: files are read synchronously anyway. */
  openNow(agent: AgentName): OpenedHistory {
    const path = this.pathOf(agent);
    ensureDir(dirname(path));
    const { records, repaired } = readRecords(path, { repair: true, opening: true });
    return { records, log: new FileHistoryLog(path), ...(repaired !== undefined ? { repaired } : {}) };
  }

  async archive(agent: AgentName, at: Date): Promise<string | undefined> {
    return archiveHistory(this.stateDir, agent, at);
  }

  async wasArchived(agent: AgentName): Promise<boolean> {
    return wasRemoved(this.stateDir, agent);
  }

  async agents(): Promise<string[]> {
    try {
      return readdirSync(join(this.stateDir, "agents"))
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => name.slice(0, -".jsonl".length))
        .sort();
    } catch (error) {
      if (isErrno(error, "ENOENT")) return [];
      throw error;
    }
  }

  async read(agent: string): Promise<HistoryRecord[]> {
    return readRecords(this.pathOf(agent), { repair: false }).records;
  }

  async carriedUsage(known?: ReadonlySet<string>): Promise<UsageRecord[]> {
    return carriedUsageIn(this.stateDir, known);
  }
}

/**
 * The usage records every history file of `stateDir` carries, archived ones
 * included, but those whose id is in `known`. Only the lines that begin as a
 * usage record are parsed, and of those not the ones `known` names (by the id
 * read from their text): this runs at every runtime's start, over histories
 * that may be megabytes long.
 */
export function carriedUsageIn(stateDir: string, known?: ReadonlySet<string>): UsageRecord[] {
  const records: UsageRecord[] = [];
  for (const dir of [join(stateDir, "agents"), removedDir(stateDir)]) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) continue;
      throw error;
    }
    for (const name of names.sort()) {
      const path = join(dir, name);
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch (error) {
        if (isErrno(error, "ENOENT")) continue;
        throw error;
      }
      // Found by searching the text, not by splitting it: a long history is
      // megabytes of other lines. A last line without its newline is an append
      // that never returned: not stored.
      const after = (from: number) => {
        const at = text.indexOf(`\n${USAGE_RECORD_PREFIX}`, from);
        return at < 0 ? -1 : at + 1;
      };
      let start = text.startsWith(USAGE_RECORD_PREFIX) ? 0 : after(0);
      while (start >= 0) {
        const end = text.indexOf("\n", start);
        if (end < 0) break;
        const id = known === undefined ? undefined : carriedUsageId(text, start);
        if (id !== undefined && known!.has(id)) {
          start = after(end);
          continue;
        }
        const parsed = checkRecord(parseJson(text.slice(start, end)));
        if (!parsed.success || parsed.data.type !== "usage") throw new CorruptStateFileError(`${path}:${lineOf(text, start)}`, "not a valid usage record");
        records.push(parsed.data.record);
        start = after(end);
      }
    }
  }
  return records;
}

/** The 1-based number of the line that begins at `offset`. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at >= 0 && at < offset; at = text.indexOf("\n", at + 1)) line += 1;
  return line;
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Appends whole lines and fsyncs; a failed write is cut back to the last whole record. */
class FileHistoryLog implements HistoryLog {
  #fd: number | undefined;
  /** The append under way: close() closes the descriptor only after its fsync. */
  #appending: Promise<void> | undefined;

  constructor(readonly location: string) {}

  // HistoryStore runs one append at a time, so the fsync may wait off the event
  // loop: no other write of this file comes between the write and its fsync.
  async append(records: readonly HistoryRecord[], options?: AppendOptions): Promise<void> {
    const appending = this.#append(records, options?.durable !== false);
    this.#appending = appending;
    try {
      await appending;
    } finally {
      if (this.#appending === appending) this.#appending = undefined;
    }
  }

  async #append(records: readonly HistoryRecord[], durable: boolean): Promise<void> {
    if (this.#fd === undefined) {
      const created = !pathExists(this.location);
      const fd = await openWhereCheap(this.location, "a", FILE_MODE);
      try {
        if (created) await fsyncDirOffLoop(dirname(this.location));
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      this.#fd = fd;
    }
    const text = records.map((record) => `${JSON.stringify(record)}\n`).join("");
    const bytes = Buffer.from(text, "utf8");
    const fd = this.#fd;
    const size = fstatSync(fd).size;
    try {
      let offset = 0;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      // Not durable: the next append's fsync (of this file, so of every write before it) is.
      if (durable) await fsyncOffLoop(fd);
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
      throw new HistoryWriteError(this.location, error, cutBack);
    }
  }

  close(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return;
    if (this.#appending) void this.#appending.catch(() => {}).finally(() => closeSync(fd));
    else closeSync(fd);
  }
}

/**
 * Reads and checks the records. A last line without its newline is a record
 * whose append never returned (the process died writing it): with `repair` (the
 * runtime that will append) it is cut off and the cut reported; without (a
 * reader, perhaps beside a live runtime) it is skipped. Any other bad line means
 * the file cannot be trusted. With `opening`, only what a HistoryStore applies
 * (see OpenedHistory.records): a line that begins as a usage record, or as a
 * message or a snapshot before the last snapshot, is passed over unparsed.
 */
export function readRecords(path: string, options: { repair: boolean; opening?: boolean }): { records: HistoryRecord[]; repaired: string | undefined } {
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
  if (!options.opening) return { records: parseLines(path, text, { passUsage: false, snapshotAt: 0 })!, repaired };
  // The last snapshot is found by how the writer begins one; should that line
  // turn out not to be a snapshot (a hand-made file can repeat a key), every
  // line is read.
  const last = text.lastIndexOf(`\n${SNAPSHOT_RECORD_PREFIX}`);
  const records = parseLines(path, text, { passUsage: true, snapshotAt: last + 1 }) ?? parseLines(path, text, { passUsage: true, snapshotAt: 0 })!;
  return { records, repaired };
}

/**
 * The records of `text`'s lines (whole lines only), checked. With `passUsage`,
 * lines that begin as a usage record are passed over unparsed; so are lines
 * before `snapshotAt` (where a snapshot line begins; 0: none) that begin as a
 * message or a snapshot. Undefined when the line at `snapshotAt` is no snapshot.
 */
function parseLines(path: string, text: string, options: { passUsage: boolean; snapshotAt: number }): HistoryRecord[] | undefined {
  const { passUsage, snapshotAt } = options;
  const records: HistoryRecord[] = [];
  for (let start = 0, line = 1; start < text.length; line += 1) {
    const end = text.indexOf("\n", start);
    const passed =
      (passUsage && text.startsWith(USAGE_RECORD_PREFIX, start)) ||
      (start < snapshotAt && (text.startsWith(MESSAGE_RECORD_PREFIX, start) || text.startsWith(SNAPSHOT_RECORD_PREFIX, start)));
    if (!passed) {
      const record = parseLine(text.slice(start, end), path, line);
      if (start === snapshotAt && snapshotAt > 0 && record.type !== "snapshot") return undefined;
      records.push(record);
    }
    start = end + 1;
  }
  return records;
}

function parseLine(line: string, path: string, number: number): HistoryRecord {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new CorruptStateFileError(`${path}:${number}`, "not valid JSON");
  }
  const checked = checkRecord(json);
  if (!checked.success) throw new CorruptStateFileError(`${path}:${number}`, checked.error.issues[0]?.message ?? "not a valid history record");
  return checked.data;
}

/**
 * A teammate's name is freed (`agent team rm`, or a spawn over a failed
 * teammate) without losing what it did: its history moves to
 * `agents/removed/<name>-<stamp>.jsonl`, out of the way of a new teammate of
 * the same name, which starts with an empty history.
 */
export function removedDir(stateDir: string): string {
  return join(stateDir, "agents", "removed");
}

/** Moves `agents/<name>.jsonl` aside; returns where it went (state-dir relative), or undefined if it had none. */
export function archiveHistory(stateDir: string, name: AgentName, at: Date): string | undefined {
  const from = join(stateDir, "agents", `${name}.jsonl`);
  if (!existsSync(from)) return undefined;
  ensureDir(removedDir(stateDir));
  // A stamp without ':' (refused in Windows file names); a second removal in
  // the same millisecond gets a suffix rather than overwriting the first.
  const stamp = at.toISOString().replaceAll(":", "").replace(/\.\d+Z$/, "Z");
  for (let n = 0; ; n += 1) {
    const file = `${name}-${stamp}${n === 0 ? "" : `.${n}`}.jsonl`;
    if (existsSync(join(removedDir(stateDir), file))) continue;
    renameSync(from, join(removedDir(stateDir), file));
    return `agents/removed/${file}`;
  }
}

// What follows `<name>-` in an archived history's file name; the upper-case T
// and Z never occur in an agent name, so "alice-2" cannot pass for "alice".
const STAMP_TAIL = /^\d{4}-\d{2}-\d{2}T\d{6}Z(\.\d+)?\.jsonl$/;

/** Whether a teammate of this name was removed before (its history is archived). */
export function wasRemoved(stateDir: string, name: AgentName): boolean {
  try {
    return readdirSync(removedDir(stateDir)).some((file) => file.startsWith(`${name}-`) && STAMP_TAIL.test(file.slice(name.length + 1)));
  } catch {
    return false;
  }
}

/** Opens `agent`'s history in the files of `stateDir` (tests, and tools that read one state dir). */
export function openFileHistory(stateDir: string, agent: AgentName): HistoryStore {
  return new HistoryStore(new FileHistoryBackend(stateDir).openNow(agent));
}
