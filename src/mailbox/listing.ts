import type { Stats } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { MAILBOX_STATES, type MailboxState } from "../core/mailbox-state.ts";
import { compareFifo, maxMessageFileBytes } from "../core/message-format.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { Pacer } from "../storage/pacer.ts";
import { checkEntry, checkMessageBytes } from "./message-file.ts";
import { type MailboxPaths, REASON_SUFFIX, fileNameOf } from "./paths.ts";
import { readQuarantineReason } from "./quarantine.ts";
import type { AgentMailboxListing, FoundMessage, ListOptions, MailboxCounts, MailboxEntry } from "./store.ts";

/**
 * Reads every entry of the selected mailboxes, for operators. Runs under the
 * mailbox lock. A file too large for a message under `maxContentBytes` is
 * listed by its size and never read: it cannot be one, and a listing must not
 * load a planted giant into memory.
 */
export async function listMailboxes(
  paths: MailboxPaths,
  fs: FsOps,
  agents: AgentName[],
  options: ListOptions,
  maxContentBytes: number,
): Promise<AgentMailboxListing[]> {
  const pacer = new Pacer();
  const selected = options.agent === undefined ? agents : agents.filter((name) => name === options.agent);
  const listings: AgentMailboxListing[] = [];
  for (const name of selected) {
    const counts = Object.fromEntries(MAILBOX_STATES.map((state) => [state, 0])) as MailboxCounts;
    const messages: MailboxEntry[] = [];
    for (const state of MAILBOX_STATES) {
      const entries = await readState(paths, fs, name, state, pacer, maxContentBytes);
      counts[state] = entries.length;
      if (options.state === undefined || options.state === state) messages.push(...entries);
    }
    listings.push({ name, counts, messages });
  }
  return listings;
}

async function readState(
  paths: MailboxPaths,
  fs: FsOps,
  agent: AgentName,
  state: MailboxState,
  pacer: Pacer,
  maxContentBytes: number,
): Promise<MailboxEntry[]> {
  const dir = paths.stateDirOf(agent, state);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return [];
    throw error;
  }
  const entries: MailboxEntry[] = [];
  for (const file of names) {
    await pacer.step();
    if (state === "quarantine" && file.endsWith(REASON_SUFFIX)) continue;
    const entry = describeEntry(fs, join(dir, file), agent, state, file, maxContentBytes);
    if (entry) entries.push(entry);
  }
  return entries.sort(byFifoThenName);
}

/** One file of a mailbox as a listing shows it; undefined when it is gone (moved meanwhile). */
export function describeEntry(
  fs: FsOps,
  path: string,
  agent: AgentName,
  state: MailboxState,
  file: string,
  maxContentBytes: number,
): MailboxEntry | undefined {
  let stats: Stats;
  try {
    stats = fs.lstatSync(path);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  const entry: MailboxEntry = { id: null, file, state, sender: null, kind: null, createdAtUtc: null, size: stats.size };
  if (state === "quarantine") entry.reason = readQuarantineReason(fs, path) ?? "(no reason recorded)";
  // Quarantined copies may carry a suffix; the id is still the name's UUID part.
  const checked = checkEntry(state === "quarantine" ? baseMessageName(file) : file, stats);
  if (!checked.ok) return entry;
  if (stats.size > maxMessageFileBytes(maxContentBytes)) {
    if (state !== "quarantine") entry.reason = tooLarge(stats.size, maxContentBytes);
    return entry;
  }
  const parsed = checkMessageBytes(fs.readFileSync(path), { id: checked.id, recipient: agent });
  if (!parsed.ok) {
    if (state !== "quarantine") entry.reason = parsed.reason;
    return entry;
  }
  const { id, sender, kind, createdAtUtc } = parsed.message;
  return { ...entry, id, sender, kind, createdAtUtc };
}

function baseMessageName(file: string): string {
  const match = /^(.*\.json)(?:\.\d+)?$/.exec(file);
  return match?.[1] ?? file;
}

function byFifoThenName(a: MailboxEntry, b: MailboxEntry): number {
  if (a.id && a.createdAtUtc && b.id && b.createdAtUtc) {
    return compareFifo({ id: a.id, createdAtUtc: a.createdAtUtc }, { id: b.id, createdAtUtc: b.createdAtUtc });
  }
  if (a.id && !b.id) return -1;
  if (!a.id && b.id) return 1;
  return a.file < b.file ? -1 : a.file > b.file ? 1 : 0;
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
