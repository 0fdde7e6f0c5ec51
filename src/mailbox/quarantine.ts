import { join } from "node:path";
import { z } from "zod";
import type { AgentName } from "../core/agent-name.ts";
import { MailboxStorageError } from "../core/errors.ts";
import type { MailboxState } from "../core/mailbox-state.ts";
import { UtcInstant } from "../core/message.ts";
import { pathExists, unlinkQuietly, writeFileAtomic } from "../storage/atomic-file.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { type MailboxPaths, REASON_SUFFIX } from "./paths.ts";

/** What is recorded beside each quarantined entry, as `<entry>.reason.json`. */
export const QuarantineRecord = z.strictObject({
  agent: z.string(),
  from: z.enum(["ready", "processing", "done", "quarantine"]),
  originalName: z.string(),
  reason: z.string(),
  quarantinedAtUtc: UtcInstant,
});
export type QuarantineRecord = z.infer<typeof QuarantineRecord>;

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
  const target = join(dir, freshName(fs, dir, entry.name));
  const stays = `it stays in ${entry.from}/`;
  try {
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

/** Reads the reason recorded for a quarantined entry, if there is a readable one. */
export function readQuarantineReason(fs: FsOps, entryPath: string): string | undefined {
  try {
    const parsed = QuarantineRecord.safeParse(JSON.parse(fs.readFileSync(reasonFileOf(entryPath), "utf8")));
    return parsed.success ? parsed.data.reason : "(reason record is unreadable)";
  } catch {
    return undefined;
  }
}
