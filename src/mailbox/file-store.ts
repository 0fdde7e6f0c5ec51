import { constants } from "node:fs";
import { join } from "node:path";
import { type AgentName, agentNameProblem, assertAgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import {
  AckConflictError,
  AgentError,
  DuplicateMessageIdError,
  InvalidMessageError,
  MailboxStorageError,
} from "../core/errors.ts";
import { MAILBOX_STATES, type MailboxState } from "../core/mailbox-state.ts";
import {
  assertMessageId,
  describeIssues,
  MailboxMessage,
  sameMessage,
  serializeMessage,
} from "../core/message.ts";
import { ensureDir, fsyncDir, isErrno, unlinkQuietly, writeNewFileSynced } from "../storage/atomic-file.ts";
import { type FileLockOptions, withFileLock } from "../storage/file-lock.ts";
import { type FsOps, realFs } from "../storage/fs-ops.ts";
import { checkEntry, checkMessageBytes } from "./message-file.ts";
import { MailboxPaths, fileNameOf } from "./paths.ts";
import { listMailboxes, findMessage } from "./listing.ts";
import { moveToQuarantine } from "./quarantine.ts";
import { ReadyIndex } from "./ready-index.ts";
import type {
  AgentMailboxListing,
  FoundMessage,
  ListOptions,
  MailboxStore,
  PruneResult,
  RecoverResult,
} from "./store.ts";

export interface FileMailboxStoreOptions {
  stateDir: string;
  /** The file-system calls to make; tests pass the real ones with a failure injected. */
  fs?: FsOps;
  /** Stamps quarantine records. */
  clock?: Clock;
  lock?: FileLockOptions;
}

/**
 * The default `MailboxStore`: one JSON file per message under
 * `<stateDir>/mailboxes/<agent>/<state>/`, every transition an atomic rename made
 * durable by fsync, under an in-process mutex and a cross-process lock.
 */
export class FileMailboxStore implements MailboxStore {
  readonly paths: MailboxPaths;
  readonly #fs: FsOps;
  readonly #clock: Clock;
  readonly #lockOptions: FileLockOptions;
  readonly #indexes = new Map<AgentName, ReadyIndex>();
  readonly #preparedAgents = new Set<AgentName>();
    #stateDirReady = false;

  constructor(options: FileMailboxStoreOptions) {
    this.paths = new MailboxPaths(options.stateDir);
    this.#fs = options.fs ?? realFs;
    this.#clock = options.clock ?? systemClock;
    this.#lockOptions = options.lock ?? {};
  }

  async send(input: MailboxMessage): Promise<void> {
    const message = this.#validMessage(input);
    const { id, recipient } = message;
    await this.#locked(() => {
      this.#prepareAgent(recipient);
      const fs = this.#fs;
      const marker = this.paths.idMarker(id);
      const target = this.paths.messageFile(recipient, "ready", id);
      const index = this.#currentIndex(recipient);
      // The message is first written as its id marker, created exclusively: that
      // is the global uniqueness check, O(1) whatever the number of agents or
      // messages, and the file is then hard-linked into ready/ — a link, unlike a
      // rename, never replaces an existing file. Both names share one inode, so
      // the marker costs no second write.
      try {
        writeNewFileSynced(marker, serializeMessage(message), fs);
      } catch (error) {
        if (isErrno(error, "EEXIST")) throw new DuplicateMessageIdError(id);
        unlinkQuietly(marker, fs);
        throw storageError(`send ${id}`, error, "nothing was written");
      }
      let linked = false;
      try {
        fs.linkSync(marker, target);
        linked = true;
        // The marker's creation and the link are in one journal transaction, which
        // this fsync commits: both are durable together (see README, "Durability").
        fsyncDir(this.paths.stateDirOf(recipient, "ready"), fs);
      } catch (error) {
        // Nothing of a failed send may remain: not the message, and not the marker
        // that would block a retry with the same id.
        if (linked) unlinkQuietly(target, fs);
        unlinkQuietly(marker, fs);
        if (isErrno(error, "EEXIST")) throw new DuplicateMessageIdError(id);
        throw storageError(`send ${id}`, error, "nothing was written");
      }
      this.#readyGained(recipient, index, (i) => i.insert({ name: fileNameOf(id), id, createdAtUtc: message.createdAtUtc }));
    });
  }

  async claim(agentName: AgentName): Promise<MailboxMessage | null> {
    const agent = assertAgentName(agentName);
    return this.#locked(async () => {
      if (!exists(this.#fs, this.paths.agentDir(agent))) return null;
      this.#prepareAgent(agent);
      const index = await this.#freshIndex(agent);
      for (let entry = index.head(); entry; entry = index.head()) {
        const checked = this.#readReady(agent, entry.name, entry.id);
        if (checked === "gone") {
          index.remove(entry.name);
          continue;
        }
        if (!checked.ok) {
          this.#quarantineFrom(agent, "ready", entry.name, checked.reason, index);
          continue;
        }
        const message = checked.message;
        if (message.createdAtUtc !== entry.createdAtUtc) {
          // The file changed under its name since it was indexed: order by what it says now.
          index.insert({ name: entry.name, id: message.id, createdAtUtc: message.createdAtUtc });
          continue;
        }
        const target = this.paths.messageFile(agent, "processing", message.id);
        if (exists(this.#fs, target)) {
          this.#quarantineFrom(agent, "ready", entry.name, `a message with id ${message.id} is already in processing/`, index);
          continue;
        }
        this.#move(`claim ${message.id}`, this.paths.messageFile(agent, "ready", message.id), target, "ready/");
        this.#readyLost(agent, index, entry.name);
        return message;
      }
      return null;
    });
  }

  async ack(input: MailboxMessage): Promise<void> {
    const message = this.#validMessage(input);
    const { id, recipient: agent } = message;
    await this.#locked(() => {
      const source = this.paths.messageFile(agent, "processing", id);
      const target = this.paths.messageFile(agent, "done", id);
      if (exists(this.#fs, target)) {
        // A late ack (the message was recovered, re-claimed and finished elsewhere)
        // succeeds only for the very same message, and never re-queues it.
        const done = this.#readMessageAt(target, agent, id);
        if (done !== "gone" && done.ok && sameMessage(done.message, message)) return;
        throw new AckConflictError(id);
      }
      if (!exists(this.#fs, source)) throw notInProcessing(message, "ack");
      this.#move(`ack ${id}`, source, target, "processing/");
    });
  }

  async release(input: MailboxMessage): Promise<void> {
    const message = this.#validMessage(input);
    const { id, recipient: agent } = message;
    await this.#locked(() => {
      const source = this.paths.messageFile(agent, "processing", id);
      const target = this.paths.messageFile(agent, "ready", id);
      this.#expectInProcessing(message, source, "release");
      const index = this.#currentIndex(agent);
      if (exists(this.#fs, target)) {
        throw new MailboxStorageError(`cannot release ${id}: ready/ already holds a message with this id; it stays in processing/`);
      }
      this.#move(`release ${id}`, source, target, "processing/");
      this.#readyGained(agent, index, (i) => i.insert({ name: fileNameOf(id), id, createdAtUtc: message.createdAtUtc }));
    });
  }

  async quarantine(input: MailboxMessage, reason: string): Promise<void> {
    const message = this.#validMessage(input);
    const { id, recipient: agent } = message;
    await this.#locked(() => {
      this.#expectInProcessing(message, this.paths.messageFile(agent, "processing", id), "quarantine");
      this.#quarantineFrom(agent, "processing", fileNameOf(id), reason, undefined);
    });
  }

  async recover(agentName: AgentName): Promise<RecoverResult> {
    const agent = assertAgentName(agentName);
    return this.#locked(() => {
      const result: RecoverResult = { recovered: [], skipped: [] };
      if (!exists(this.#fs, this.paths.agentDir(agent))) return result;
      this.#prepareAgent(agent);
      const fs = this.#fs;

      const processing = this.paths.stateDirOf(agent, "processing");
      for (const name of fs.readdirSync(processing).sort()) {
        const checked = this.#checkFile(agent, processing, name);
        if (checked === "gone") continue;
        if (!checked.ok) {
          this.#quarantineFrom(agent, "processing", name, checked.reason, undefined);
          result.skipped.push({ agent, file: name, reason: `quarantined: ${checked.reason}` });
          continue;
        }
        const { id } = checked.message;
        const target = this.paths.messageFile(agent, "ready", id);
        if (exists(fs, target)) {
          result.skipped.push({ agent, file: name, reason: "ready/ already holds a message with this id" });
          continue;
        }
        const index = this.#currentIndex(agent);
        this.#move(`recover ${id}`, join(processing, name), target, "processing/");
        this.#readyGained(agent, index, (i) => i.insert({ name, id, createdAtUtc: checked.message.createdAtUtc }));
        result.recovered.push({ agent, id });
      }
      return result;
    });
  }

  async list(options: ListOptions = {}): Promise<AgentMailboxListing[]> {
    if (options.agent !== undefined) assertAgentName(options.agent);
    return this.#locked(() => listMailboxes(this.paths, this.#fs, this.#agentNames(), options, pause));
  }

  async agents(): Promise<AgentName[]> {
    return this.#agentNames();
  }

  async find(id: string): Promise<FoundMessage | null> {
    assertMessageId(id);
    return this.#locked(() => findMessage(this.paths, this.#fs, this.#agentNames(), id));
  }

  async prune(before: Date): Promise<PruneResult> {
    const cutoff = before.toISOString();
    return this.#locked(async () => {
      const fs = this.#fs;
      const pruned: PruneResult["pruned"] = [];
      let read = 0;
      for (const agent of this.#agentNames()) {
        const doneDir = this.paths.stateDirOf(agent, "done");
        if (!exists(fs, doneDir)) continue;
        const before = pruned.length;
        for (const name of fs.readdirSync(doneDir)) {
          if (++read % PAUSE_EVERY === 0) await pause();
          const checked = this.#checkFile(agent, doneDir, name);
          if (checked === "gone" || !checked.ok || checked.message.createdAtUtc >= cutoff) continue;
          fs.unlinkSync(join(doneDir, name));
          unlinkQuietly(this.paths.idMarker(checked.message.id), fs);
          pruned.push({ agent, id: checked.message.id });
        }
        if (pruned.length > before) fsyncDir(doneDir, fs);
      }
      const orphanMarkers = this.#pruneOrphanMarkers(before.getTime());
      if (pruned.length > 0 || orphanMarkers > 0) fsyncDir(this.paths.ids, fs);
      return { pruned, orphanMarkers };
    });
  }

  /**
   * Removes markers whose message file is gone: left by a send killed before its
   * link into ready/ (never delivered, never reported as sent) or by a message
   * deleted by hand. Under the lock no send is in flight, so a marker with no
   * second link is an orphan.
   */
  #pruneOrphanMarkers(beforeMs: number): number {
    const fs = this.#fs;
    let removed = 0;
    let names: string[];
    try {
      names = fs.readdirSync(this.paths.ids);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return 0;
      throw error;
    }
    for (const name of names) {
      const path = join(this.paths.ids, name);
      const stats = fs.lstatSync(path);
      if (stats.nlink === 1 && stats.mtimeMs < beforeMs) {
        fs.unlinkSync(path);
        removed += 1;
      }
    }
    return removed;
  }

  // ---- internals ----------------------------------------------------------

  #validMessage(input: MailboxMessage): MailboxMessage {
    const parsed = MailboxMessage.safeParse(input);
    if (!parsed.success) throw new InvalidMessageError(describeIssues(parsed.error));
    return parsed.data;
  }

  async #locked<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.#stateDirReady) {
      ensureDir(this.paths.stateDir, this.#fs);
      this.#stateDirReady = true;
    }
    try {
      return await withFileLock(this.paths.lock, work, this.#lockOptions);
    } catch (error) {
      // After a failure the cached queues may not match the disk any more.
      this.#indexes.clear();
      throw error;
    }
  }

  #prepareAgent(agent: AgentName): void {
    if (this.#preparedAgents.has(agent)) return;
    for (const state of MAILBOX_STATES) ensureDir(this.paths.stateDirOf(agent, state), this.#fs);
    ensureDir(this.paths.ids, this.#fs);
    this.#preparedAgents.add(agent);
  }

  #agentNames(): AgentName[] {
    let names: string[];
    try {
      names = this.#fs.readdirSync(this.paths.root);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return [];
      throw storageError("list agents", error, "nothing was changed");
    }
    return names.filter((name) => agentNameProblem(name) === undefined).sort();
  }

  /** The ready/ queue of `agent`, re-read only when ready/ changed since it was last seen. */
  async #freshIndex(agent: AgentName): Promise<ReadyIndex> {
    let index = this.#indexes.get(agent);
    const stamp = this.#readyStamp(agent);
    if (index && index.stamp === stamp) return index;
    index ??= new ReadyIndex();
    this.#indexes.set(agent, index);
    const readyDir = this.paths.stateDirOf(agent, "ready");
    const present = new Set(this.#fs.readdirSync(readyDir));
    for (const name of [...index.names()]) if (!present.has(name)) index.remove(name);
    let read = 0;
    for (const name of present) {
      if (index.has(name)) continue;
      if (++read % PAUSE_EVERY === 0) await pause();
      const checked = this.#checkFile(agent, readyDir, name);
      if (checked === "gone") continue;
      if (!checked.ok) {
        this.#quarantineFrom(agent, "ready", name, checked.reason, undefined);
        continue;
      }
      index.insert({ name, id: checked.message.id, createdAtUtc: checked.message.createdAtUtc });
    }
    index.stamp = this.#readyStamp(agent);
    return index;
  }

  /**
   * What identifies the current content of ready/: its mtime. Every locked change
   * to ready/ also sets the mtime to a value above the one it found (see
   * #readyChanged), so a change by any process is seen even when it falls in the
   * same clock tick; files dropped there by hand change it as well.
   */
  #readyStamp(agent: AgentName): bigint {
    return this.#fs.statSync(this.paths.stateDirOf(agent, "ready"), { bigint: true }).mtimeNs;
  }

  /** This process's cached queue of `agent`, if it still matches ready/ on disk. */
  #currentIndex(agent: AgentName): ReadyIndex | undefined {
    const index = this.#indexes.get(agent);
    return index && index.stamp === this.#readyStamp(agent) ? index : undefined;
  }

  /**
   * Records that this process just added to ready/ of `agent`, so other processes
   * re-read it, and applies the same change to `index` — which must have been
   * current before the change — so this one does not have to.
   */
  #readyGained(agent: AgentName, index: ReadyIndex | undefined, update: (index: ReadyIndex) => void): void {
    const readyDir = this.paths.stateDirOf(agent, "ready");
    const current = this.#readyStamp(agent);
    const previous = index?.stamp ?? current;
    // Strictly above both what this process last saw and what is there now.
    const floor = (previous > current ? previous : current) + 1_000n;
    const now = BigInt(Date.now()) * 1_000_000n;
    const next = now > floor ? now : floor;
    const seconds = Number(next / 1_000n) / 1_000_000;
    this.#fs.utimesSync(readyDir, seconds, seconds);
    if (!index) return;
    update(index);
    index.stamp = this.#readyStamp(agent);
  }

  /**
   * Records that this process just took `name` out of ready/. Other processes need
   * no signal for a removal: a cached entry that is gone is dropped when it is
   * reached. The kernel moved the mtime, so a current index is re-stamped.
   */
  #readyLost(agent: AgentName, index: ReadyIndex | undefined, name: string): void {
    if (!index) return;
    index.remove(name);
    index.stamp = this.#readyStamp(agent);
  }

  /** Reads and checks a ready/ file at claim time; "gone" when it vanished. */
  #readReady(agent: AgentName, name: string, id: string) {
    return this.#readMessageAt(join(this.paths.stateDirOf(agent, "ready"), name), agent, id);
  }

  #readMessageAt(path: string, agent: AgentName, id: string) {
    let bytes: Uint8Array;
    try {
      const stats = this.#fs.lstatSync(path);
      if (!stats.isFile()) return { ok: false as const, reason: "entry is not a regular file" };
      bytes = this.#fs.readFileSync(path);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return "gone" as const;
      throw storageError(`read ${path}`, error, "nothing was changed");
    }
    return checkMessageBytes(bytes, { id, recipient: agent });
  }

  /** Full strict check of one directory entry: its kind, its name, then its content. */
  #checkFile(agent: AgentName, dir: string, name: string) {
    const path = join(dir, name);
    let stats;
    try {
      stats = this.#fs.lstatSync(path);
    } catch (error) {
      if (isErrno(error, "ENOENT")) return "gone" as const;
      throw storageError(`read ${path}`, error, "nothing was changed");
    }
    const entry = checkEntry(name, stats);
    if (!entry.ok) return entry;
    return this.#readMessageAt(path, agent, entry.id);
  }

  #expectInProcessing(message: MailboxMessage, source: string, op: string): void {
    const current = this.#readMessageAt(source, message.recipient, message.id);
    if (current === "gone") throw notInProcessing(message, op);
    if (!current.ok || !sameMessage(current.message, message)) {
      throw new MailboxStorageError(
        `cannot ${op} ${message.id}: processing/ holds a different message with this id; inspect it with \`agent mailbox show ${message.id}\``,
      );
    }
  }

  /** One durable transition. On failure the source stays where it was. */
  #move(what: string, source: string, target: string, from: string): void {
    const fs = this.#fs;
    try {
      fs.renameSync(source, target);
    } catch (error) {
      throw storageError(what, error, `the message stays in ${from}`);
    }
    // One fsync, of the destination: a rename is a single journal transaction on
    // the journaling file systems this runs on, so committing it makes both the new
    // entry and the removal of the old one durable — never both, never neither.
    try {
      fsyncDir(dirnameOf(target), fs);
    } catch (error) {
      // Not known to be durable: put it back so the caller's failure is the truth.
      try {
        fs.renameSync(target, source);
      } catch {
        throw storageError(what, error, `the move could not be undone; the message is at ${target}`);
      }
      throw storageError(what, error, `the message stays in ${from}`);
    }
  }

  #quarantineFrom(
    agent: AgentName,
    from: MailboxState,
    name: string,
    reason: string,
    index: ReadyIndex | undefined,
  ): void {
    moveToQuarantine(this.paths, this.#fs, {
      agent,
      from,
      name,
      reason,
      now: this.#clock.now(),
    });
    if (from === "ready") this.#readyLost(agent, index, name);
  }
}

// Long passes over a deep directory give the event loop a turn now and then, so
// the lock's refresh timer runs and the lock never looks abandoned while held.
const PAUSE_EVERY = 500;

function pause(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function exists(fs: FsOps, path: string): boolean {
  try {
    fs.lstatSync(path);
    return true;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return false;
    throw error;
  }
}

function dirnameOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

function notInProcessing(message: MailboxMessage, op: string): MailboxStorageError {
  return new MailboxStorageError(
    `cannot ${op} ${message.id}: it is not in processing/ of "${message.recipient}" (already recovered or finished?); ` +
      `find it with \`agent mailbox show ${message.id}\``,
  );
}

function storageError(what: string, cause: unknown, outcome: string): MailboxStorageError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new MailboxStorageError(`mailbox ${what} failed: ${detail}; ${outcome}`, { cause });
}
