import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { StateDirBusyError } from "../core/errors.ts";
import { RuntimeLock } from "../storage/runtime-lock.ts";
import type { SessionMeta } from "./session-meta.ts";

/**
 * What a fork carries over: the Lead's conversation, and the attachments its
 * notes name (the large tool results compaction saved, the long messages it got).
 */
const FORKED = [join("agents", "lead.jsonl"), "attachments"];

/**
 * Copies the Lead's conversation of session `from` (directory `fromDir`) into
 * the new session's `toDir` (--fork-session). The source's runtime lock is held
 * while copying, so no turn is half-appended to what is copied; a source that is
 * running is refused (exit 4). Its team, mailboxes and tasks stay its own.
 */
export async function forkSession(from: SessionMeta, fromDir: string, toDir: string): Promise<void> {
  let lock: RuntimeLock;
  try {
    lock = await RuntimeLock.acquire(fromDir, { waitMs: 0 });
  } catch (error) {
    if (!(error instanceof StateDirBusyError)) throw error;
    throw new StateDirBusyError(fromDir, error.owner, `session ${from.id} is running; fork it once it has finished`);
  }
  try {
    for (const part of FORKED) {
      if (existsSync(join(fromDir, part))) cpSync(join(fromDir, part), join(toDir, part), { recursive: true, errorOnExist: true, force: false });
    }
  } finally {
    await lock.release();
  }
}
