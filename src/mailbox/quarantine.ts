import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import { MailboxStorageError } from "../core/errors.ts";
import { isMailboxState, type MailboxState } from "../core/mailbox-state.ts";
import { INVALID_UTC_INSTANT, Problems, UTC_INSTANT, isPlainRecord, pick } from "../core/plain-check.ts";
import { ensureDir, pathExists, unlinkQuietly, writeFileAtomic } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { type MailboxPaths, REASON_SUFFIX } from "./paths.ts";

/**
 * What is recorded beside each quarantined entry, as `<entry>.reason.json`. Read
 * by `mailbox list/show`, so checked by hand (no zod on that path); the same rules
 * as zod are in quarantine-record-schema.ts, held to agree by a test.
 */
export interface QuarantineRecord {
  agent: string;
  from: MailboxState;
  originalName: string;
  reason: string;
  quarantinedAtUtc: string;
}

const RECORD_FIELDS = ["agent", "from", "originalName", "reason", "quarantinedAtUtc"] as const;

export function checkQuarantineRecord(value: unknown): { ok: true; record: QuarantineRecord } | { ok: false; problem: string } {
  const problems = new Problems();
  if (!isPlainRecord(value)) return { ok: false, problem: "Invalid input: expected object" };
  problems.unknownKeys(value, new Set(RECORD_FIELDS));
  problems.string(value, "agent");
  if (typeof value.from !== "string" || !isMailboxState(value.from)) {
    problems.add("from", 'Invalid option: expected one of "ready"|"processing"|"done"|"quarantine"');
  }
  problems.string(value, "originalName");
  problems.string(value, "reason");
  problems.matching(value, "quarantinedAtUtc", UTC_INSTANT, INVALID_UTC_INSTANT);
  if (!problems.empty) return { ok: false, problem: problems.toString() };
  return { ok: true, record: pick<QuarantineRecord>(value, RECORD_FIELDS) };
}

export function reasonFileOf(entryPath: string): string {
  return `${entryPath}${REASON_SUFFIX}`;
}

/**
 * Moves a bad or failed entry (file, directory or symlink alike) into
 * quarantine/ under a name nothing else holds — an earlier piece of evidence with
 * the same name is never overwritten — and records why. Runs under the mailbox
 * lock, which is what makes "check the name is free, then rename" safe: rename
 * itself would silently replace an existing file.
 */
export function moveToQuarantine(
  paths: MailboxPaths,
  fs: FsOps,
  entry: { agent: AgentName; from: MailboxState; name: string; reason: string; now: Date },
): string {
  const dir = paths.stateDirOf(entry.agent, "quarantine");
  const source = join(paths.stateDirOf(entry.agent, entry.from), entry.name);
  const stays = `it stays in ${entry.from}/`;
  let target: string;
  try {
    // Made by the first quarantine of the agent (see FileMailboxStore#prepareAgent).
    ensureDir(dir, fs);
    target = join(dir, freshName(fs, dir, entry.name));
    fs.renameSync(source, target);
  } catch (error) {
    throw quarantineError(entry, `${(error as Error).message}; ${stays}`, error);
  }
  const record: QuarantineRecord = {
    agent: entry.agent,
    from: entry.from,
    originalName: entry.name,
    reason: entry.reason,
    quarantinedAtUtc: entry.now.toISOString(),
  };
  try {
    // Its directory fsync also commits the rename above: evidence and reason
    // become durable together.
    writeFileAtomic(reasonFileOf(target), `${JSON.stringify(record, null, 2)}\n`, fs);
  } catch (error) {
    // Not known to be durable: undo, so the failure the caller sees is the truth.
    try {
      fs.renameSync(target, source);
    } catch {
      throw quarantineError(entry, `${(error as Error).message}; the entry is at ${target} without its reason`, error);
    }
    unlinkQuietly(reasonFileOf(target), fs);
    throw quarantineError(entry, `${(error as Error).message}; ${stays}`, error);
  }
  return target;
}

function quarantineError(entry: { agent: string; from: string; name: string }, detail: string, cause: unknown) {
  return new MailboxStorageError(`could not quarantine ${entry.from}/${entry.name} of "${entry.agent}": ${detail}`, {
    cause,
  });
}

function freshName(fs: FsOps, dir: string, name: string): string {
  // A name ending like a reason file would be mistaken for one: always suffix it.
  let attempt = name.endsWith(REASON_SUFFIX) ? 1 : 0;
  for (;;) {
    const candidate = attempt === 0 ? name : `${name}.${attempt}`;
    if (!pathExists(join(dir, candidate), fs) && !pathExists(reasonFileOf(join(dir, candidate)), fs)) return candidate;
    attempt += 1;
  }
}

/** Far above any reason this store writes (a failure's message, a path, a time). */
const MAX_REASON_FILE_BYTES = 1024 * 1024;

/** Reads the reason recorded for a quarantined entry, if there is a readable one. */
export function readQuarantineReason(fs: FsOps, entryPath: string): string | undefined {
  try {
    // Listings read one per quarantined entry: a planted giant is named, not loaded.
    const size = fs.lstatSync(reasonFileOf(entryPath)).size;
    if (size > MAX_REASON_FILE_BYTES) return `(reason record is ${size} bytes, too large to be one; not read)`;
    const parsed = checkQuarantineRecord(JSON.parse(fs.readFileSync(reasonFileOf(entryPath), "utf8")));
    return parsed.ok ? parsed.record.reason : "(reason record is unreadable)";
  } catch {
    return undefined;
  }
}
