import type { BigIntStats, Stats } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { MAILBOX_STATES, type MailboxState } from "../core/mailbox-state.ts";
import { maxMessageFileBytes } from "../core/message-format.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { Pacer } from "../storage/pacer.ts";
import type { MessageKind } from "../core/message.ts";
import { type RecordFields, appendRecords, fieldsIfSameFile, lookUpRecords, readIndexText, recordBody, rewriteIndex } from "./mailbox-index.ts";
import { checkEntry, checkMessageBytes } from "./message-file.ts";
import { type MailboxPaths, REASON_SUFFIX, fileNameOf } from "./paths.ts";
import { readQuarantineReason } from "./quarantine.ts";
import type { AgentMailboxListing, FoundMessage, ListOptions, MailboxCounts, MailboxEntry } from "./store.ts";

/**
 * Describes every entry of the selected mailboxes, for operators. Runs under the
 * mailbox lock (`writable`), or without it on a state dir this process cannot
 * write. A file the agent's index has a record of, still the same file (inode,
 * size and mtime), is described from the record; any other is read, and recorded
 * when `writable` (see mailbox-index.ts). A file too large for a message under
 * `maxContentBytes` is listed by its size and never read: it cannot be one, and a
 * listing must not load a planted giant into memory.
 */
export async function listMailboxes(
  paths: MailboxPaths,
  fs: FsOps,
  agents: AgentName[],
  options: ListOptions,
  maxContentBytes: number,
  writable: boolean,
): Promise<AgentMailboxListing[]> {
  const pacer = new Pacer();
  const selected = options.agent === undefined ? agents : agents.filter((name) => name === options.agent);
  const listings: AgentMailboxListing[] = [];
  for (const name of selected) {
    const counts = Object.fromEntries(MAILBOX_STATES.map((state) => [state, 0])) as MailboxCounts;
    const messages: MailboxEntry[] = [];
    const listed = MAILBOX_STATES.map((state) => ({ state, dir: paths.stateDirOf(name, state), files: filesIn(fs, paths.stateDirOf(name, state)) }));
    const look = lookUp(fs, paths.index(name), listed);
    for (const { state, dir, files } of listed) {
      const entries = await describeAll(fs, name, state, dir, files, pacer, maxContentBytes, look);
      counts[state] = entries.length;
      if (options.state === undefined || options.state === state) messages.push(...entries);
    }
    if (writable) keepIndex(fs, paths.index(name), look);
    listings.push({ name, counts, messages });
  }
  return listings;
}

/** The records of an agent's listed files, what this listing read and recorded, and the records of every message it found. */
interface Lookup {
  /** Base file name → its record, or "" when the index has none. */
  records: Map<string, string>;
  /** Lines in the index, and damaged ones among those looked at. */
  lines: number;
  bad: number;
  added: string[];
  kept: string[];
}

function lookUp(fs: FsOps, path: string, listed: { state: MailboxState; files: string[] }[]): Lookup {
  const records = new Map<string, string>();
  for (const { state, files } of listed) {
    for (const file of files) {
      if (state !== "quarantine") records.set(file, "");
      else if (!file.endsWith(REASON_SUFFIX)) records.set(baseMessageName(file), "");
    }
  }
  const text = readIndexText(fs, path);
  const { lines, bad } = text === undefined ? { lines: 0, bad: 1 } : lookUpRecords(text, records);
  return { records, lines, bad, added: [], kept: [] };
}

/**
 * Brings the index up to what the listing found: new records appended, or — when
 * it had damaged lines, or more records of messages that are gone (pruned,
 * removed by hand) than of ones still there — written again with just the latter.
 */
function keepIndex(fs: FsOps, path: string, { lines, bad, added, kept }: Lookup): void {
  const gone = lines - (kept.length - added.length);
  if (bad > 0 || gone > Math.max(STALE_RECORDS_KEPT, kept.length)) rewriteIndex(fs, path, kept);
  else appendRecords(fs, path, added);
}

/** Records of messages no longer there are harmless (never listed or claimed) and dropped only past this many. */
const STALE_RECORDS_KEPT = 1024;

function filesIn(fs: FsOps, dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
}

async function describeAll(
  fs: FsOps,
  agent: AgentName,
  state: MailboxState,
  dir: string,
  files: string[],
  pacer: Pacer,
  maxContentBytes: number,
  look: Lookup,
): Promise<MailboxEntry[]> {
  const entries: MailboxEntry[] = [];
  for (const file of files) {
    const turn = pacer.next();
    if (turn) await turn;
    if (state === "quarantine" && file.endsWith(REASON_SUFFIX)) continue;
    const entry = describeEntry(fs, `${dir}/${file}`, agent, state, file, maxContentBytes, look);
    if (entry) entries.push(entry);
  }
  return inListOrder(entries);
}

/** One file of a mailbox as a listing shows it; undefined when it is gone (moved meanwhile). */
export function describeEntry(
  fs: FsOps,
  path: string,
  agent: AgentName,
  state: MailboxState,
  file: string,
  maxContentBytes: number,
  /** The agent's index and what this listing records; without it, every file is read. */
  look?: Lookup,
): MailboxEntry | undefined {
  let stats: Stats;
  try {
    stats = fs.lstatSync(path);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const size = stats.size;
  const entry: MailboxEntry = { id: null, file, state, sender: null, kind: null, createdAtUtc: null, size };
  // A quarantined entry shows why it was quarantined; another, why it is not a message.
  if (state === "quarantine") entry.reason = readQuarantineReason(fs, path) ?? "(no reason recorded)";
  // Quarantined copies may carry a suffix; the id is still the name's UUID part.
  const base = state === "quarantine" ? baseMessageName(file) : file;
  const tooLargeAt = maxMessageFileBytes(maxContentBytes);
  // A file its record still describes (the same inode, size and mtime) is the regular
  // file named by a message id that was recorded: nothing more to check or read.
  const record = look?.records.get(base);
  const fields = !record || size > tooLargeAt ? undefined : fieldsIfSameFile(record, stats);
  if (look && fields) {
    look.kept.push(record!);
    return described(entry, base.slice(0, 36), fields);
  }
  const checked = checkEntry(base, stats);
  if (!checked.ok) return entry;
  if (size > tooLargeAt) {
    entry.reason ??= tooLarge(size, maxContentBytes);
    return entry;
  }
  // The exact stamp for a record is taken before the read: a change after it shows as a mismatch later.
  const stamp = look ? lstatExactly(fs, path) : undefined;
  const parsed = checkMessageBytes(fs.readFileSync(path), { id: checked.id, recipient: agent });
  if (!parsed.ok) {
    entry.reason ??= parsed.reason;
    return entry;
  }
  if (look && stamp) {
    const body = recordBody(parsed.message, stamp);
    look.added.push(body);
    look.kept.push(body);
  }
  return described(entry, parsed.message.id, parsed.message);
}

function lstatExactly(fs: FsOps, path: string): BigIntStats | undefined {
  try {
    return fs.lstatSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

function described(entry: MailboxEntry, id: string, fields: RecordFields): MailboxEntry {
  entry.id = id;
  entry.sender = fields.sender;
  entry.kind = fields.kind as MessageKind;
  entry.createdAtUtc = fields.createdAtUtc;
  return entry;
}

function baseMessageName(file: string): string {
  const match = /^(.*\.json)(?:\.\d+)?$/.exec(file);
  return match?.[1] ?? file;
}

/**
 * Messages in FIFO order, then what is not a message by file name: by one native
 * sort of strings (a comparator called 50 000 times cost more than the listing's
 * every stat). A key is the FIFO key (both parts fixed width) or, after every
 * one of those, the file name; then a NUL and the entry's position.
 */
function inListOrder(entries: MailboxEntry[]): MailboxEntry[] {
  const keys = entries.map((e, at) => (e.id !== null && e.createdAtUtc !== null ? `0${e.createdAtUtc}${e.id}\0${at}` : `1${e.file}\0${at}`));
  keys.sort();
  return keys.map((key) => entries[Number(key.slice(key.lastIndexOf("\0") + 1))]!);
}

function tooLarge(size: number, maxContentBytes: number): string {
  return `file is ${size} bytes, too large for a message under the cap of ${maxContentBytes} content bytes (mailbox.maxContentBytes); not read`;
}

/** What `show` prints of a file too large to be a message: its start. */
const RAW_PREFIX_BYTES = 4096;

/** The first `length` bytes of the file at `path`, without reading the rest. */
function readPrefix(fs: FsOps, path: string, length: number): Buffer {
  const fd = fs.openSync(path, "r");
  try {
    const bytes = Buffer.alloc(length);
    return bytes.subarray(0, fs.readSync(fd, bytes, 0, length, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Looks for `<id>.json` in every agent and state; the first hit wins (there is
 * at most one). A file too large to be a message is not read whole: its start
 * is shown as its raw text.
 */
export function findMessage(paths: MailboxPaths, fs: FsOps, agents: AgentName[], id: string, maxContentBytes: number): FoundMessage | null {
  for (const agent of agents) {
    for (const state of MAILBOX_STATES) {
      const file = fileNameOf(id);
      const path = join(paths.stateDirOf(agent, state), file);
      let bytes: Buffer;
      try {
        const stats = fs.lstatSync(path);
        if (!stats.isFile()) continue;
        if (stats.size > maxMessageFileBytes(maxContentBytes)) {
          const start = readPrefix(fs, path, RAW_PREFIX_BYTES).toString("utf8");
          const reason = tooLarge(stats.size, maxContentBytes);
          const found: FoundMessage = { agent, state, file, message: null, raw: `${start}… (${stats.size - RAW_PREFIX_BYTES} more bytes)`, reason };
          if (state === "quarantine") found.reason = readQuarantineReason(fs, path) ?? reason;
          return found;
        }
        bytes = fs.readFileSync(path);
      } catch (error) {
        if (isErrno(error, "ENOENT")) continue;
        throw error;
      }
      const parsed = checkMessageBytes(bytes, { id, recipient: agent });
      if (parsed.ok) return { agent, state, file, message: parsed.message };
      const found: FoundMessage = { agent, state, file, message: null, raw: bytes.toString("utf8"), reason: parsed.reason };
      if (state === "quarantine") found.reason = readQuarantineReason(fs, path) ?? parsed.reason;
      return found;
    }
  }
  return null;
}
