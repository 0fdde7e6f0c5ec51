import { type AgentName, agentNameProblem, assertAgentName } from "../core/agent-name.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import {
  AckConflictError,
  DuplicateMessageIdError,
  LockError,
  MailboxStorageError,
  MessageTooLargeError,
} from "../core/errors.ts";
import type { BigIntStats } from "node:fs";
import type { MailboxState } from "../core/mailbox-state.ts";
import type { MailboxMessage } from "../core/message.ts";
import { assertMessageId, DEFAULT_MAX_CONTENT_BYTES, sameMessage, serializeMessage } from "../core/message-format.ts";
import {
  ensureDir,
  ensureDirWhereCheap,
  isErrno,
  pathExists,
  unlinkQuietly,
  writeNewFileDurably,
} from "../storage/atomic-file.ts";
import { type FileLockOptions, withFileLock } from "../storage/file-lock.ts";
import { type FsOps, realFs } from "../storage/fs-ops.ts";
import { CheckedMessages } from "./checked-messages.ts";
import { type MoveOutcome, linkInto, moveDurably } from "./durable-move.ts";
import { BatchFailure, DurableBatch } from "./group-commit.ts";
import { differentInProcessing, notInProcessing, storageError } from "./failures.ts";
import { findMessage, listMailboxes } from "./listing.ts";
import { appendRecords, recordBody } from "./mailbox-index.ts";
import { checkFile, readMessageAt } from "./message-file.ts";
import { MailboxPaths, fileNameOf } from "./paths.ts";
import { pruneMailboxes } from "./prune.ts";
import { moveToQuarantine } from "./quarantine.ts";
import { type ReadyIndex, keyedByName } from "./ready-index.ts";
import { ReadyQueues } from "./ready-queues.ts";
import { SentFiles, type Stamp } from "./sent-files.ts";
import { SpareMarkers } from "./spare-markers.ts";
import {
  type AgentMailboxListing,
  type ClaimFilter,
  claimable,
  type FoundMessage,
  type ListOptions,
  type MailboxStore,
  type PruneResult,
  type RecoverResult,
} from "./store.ts";
import { groupStart } from "../storage/group-start.ts";

export interface FileMailboxStoreOptions {
  stateDir: string;
  /** The file-system calls to make; tests pass the real ones with a failure injected. */
  fs?: FsOps;
  /** Stamps quarantine records. */
  clock?: Clock;
  lock?: FileLockOptions;
  /** The cap on a message's content in UTF-8 bytes (default 1 MiB): larger sends are refused, larger files quarantined at claim. */
  maxContentBytes?: number;
  /** How many sent files a claim may take without reading them (default 4 096; see sent-files.ts). */
  sentFilesBound?: number;
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
  readonly #queues: ReadyQueues;
  readonly #preparedAgents = new Set<AgentName>();
  readonly #checked = new CheckedMessages();
  /** What this store sent and can prove unchanged at claim, so as not to read it again. */
  readonly #sent: SentFiles;
  #stateDirReady = false;
  /** Sends, claims and acks waiting for the next take of the lock (see #batched). */
  readonly #queued: QueuedCall[] = [];
  #draining: Promise<void> | undefined;
  /** Agents whose done/ this store made or found (see #madeDone). */
  readonly #doneDirs = new Set<AgentName>();
  /** done/ directories being made (see #makeDone). */
  readonly #doneMaking = new Map<AgentName, Promise<void>>();
  /** Inodes made ahead for this process's sends (see reserve). */
  readonly #spares: SpareMarkers;
  /** Agents a release or recover of this process is adding to (see #addingTo). */
  readonly #adding = new Map<AgentName, number>();

  readonly maxContentBytes: number;

  constructor(options: FileMailboxStoreOptions) {
    this.paths = new MailboxPaths(options.stateDir);
    this.#fs = options.fs ?? realFs;
    this.#spares = new SpareMarkers(this.paths.ids, this.#fs);
    this.#clock = options.clock ?? systemClock;
    this.#lockOptions = options.lock ?? {};
    this.maxContentBytes = options.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
    this.#sent = new SentFiles(options.sentFilesBound);
    this.#queues = new ReadyQueues(
      this.paths,
      this.#fs,
      (agent, name, reason) => this.#quarantineFrom(agent, "ready", name, reason, undefined),
      this.maxContentBytes,
    );
  }

  /** Every call joins the queue of the next take of the lock before it awaits anything (#send), and a batch runs its calls in order. */
  readonly sendsInCallOrder = true;

  send(input: MailboxMessage): Promise<void> {
    return this.#send(input, "ready");
  }

  async sendClaimed(input: MailboxMessage): Promise<void> {
    await this.#send(input, "processing");
    // Claimed as it is sent: its ack's done/ is made while it is worked, as a claim's is.
    void this.#makeDone(input.recipient);
  }

  /** A send into `ready/`, or straight into `processing/` for a recipient its sender runs. */
  async #send(input: MailboxMessage, into: "ready" | "processing"): Promise<void> {
    const message = this.#checked.valid(input);
    const { id, recipient } = message;
    const bytes = Buffer.byteLength(message.content, "utf8");
    if (bytes > this.maxContentBytes) throw new MessageTooLargeError(bytes, this.maxContentBytes);
    const fs = this.#fs;
    const marker = this.paths.idMarker(id);
    // The message is first written as its id marker, created exclusively: that
    // is the global uniqueness check, O(1) whatever the number of agents or
    // messages, and the file is then hard-linked into ready/ — a link, unlike a
    // rename, never replaces an existing file. Both names share one inode, so
    // the marker costs no second write.
    //
    // Written and fsynced before the lock is taken, while other calls' batches
    // hold it: under the lock a send is its link alone. Only what this call
    // created stays its own; anything else (the marker there already, a failed
    // write, a file another sender of this id put in its place) is settled
    // under the lock, as before (writeMarker).
    const written = writeMarkerEarly(fs, marker, this.#spares, () => {
      this.#prepareAgent(recipient);
      return serializeMessage(message);
    });
    const writeMarker = async (): Promise<void> => {
      this.#prepareAgent(recipient);
      try {
        try {
          await writeNewFileDurably(marker, serializeMessage(message), fs);
        } catch (error) {
          // A marker no message file shares is what a send killed before its link
          // left (prune removes the same ones), or an early write that failed or
          // is not done: its id is in no state, so it is free. A retry of that
          // send (a teammate's result, whose id is derived from its input's)
          // must not be refused as "already sent".
          if (!isErrno(error, "EEXIST") || fs.lstatSync(marker).nlink !== 1) throw error;
          fs.unlinkSync(marker);
          await writeNewFileDurably(marker, serializeMessage(message), fs);
        }
      } catch (error) {
        if (isErrno(error, "EEXIST")) throw new DuplicateMessageIdError(id);
        unlinkQuietly(marker, fs);
        throw storageError(`send ${id}`, error, "nothing was written");
      }
    };
    await this.#batched(`send ${id}`, async (batch) => {
      this.#prepareAgent(recipient);
      const dir = this.paths.stateDirOf(recipient, into);
      const name = fileNameOf(id);
      const target = `${dir}/${name}`;
      const index = into === "ready" ? this.#queues.current(recipient) : undefined;
      let handle: number | undefined;
      let stamp: Stamp | undefined;
      const early = await written;
      let linked = false;
      const failed = (error: unknown): never => {
        // Nothing of a failed send may remain: not the message, and not the marker
        // that would block a retry with the same id.
        if (linked) unlinkQuietly(target, fs);
        unlinkQuietly(marker, fs);
        if (isErrno(error, "EEXIST")) throw new DuplicateMessageIdError(id);
        throw storageError(`send ${id}`, error, "nothing was written");
      };
      if (early !== undefined) {
        // Linked first, looked at after: the file linked is the one this call wrote
        // only if it is that inode, written then, and now has two names — one
        // another sender put in its place has other links or none, one prune
        // removed is "missing". Anything else, a failed link included (its marker
        // may not be this call's to remove), is settled as a late write is.
        let through: number | undefined | "missing" = "missing";
        try {
          through = linkInto(fs, marker, dir, name, true);
        } catch {
          // Settled below.
        }
        if (through !== "missing") {
          // Stamped at once after the link (which changed the file's ctime and link
          // count), before the name has been visible for more than a moment.
          stamp = this.#sent.stamp(fs, target);
          if (stamp && stamp.ino === early.ino && stamp.dev === early.dev && stamp.mtimeNs === early.mtimeNs && stamp.nlink === 2n) {
            linked = true;
            handle = through;
          } else {
            try {
              fs.unlinkSync(target);
            } catch (error) {
              throw storageError(`send ${id}`, error, `a link to another file may remain at ${target}`);
            }
          }
        }
      }
      if (!linked) {
        await writeMarker();
        try {
          handle = linkInto(fs, marker, dir, name, false) as number | undefined;
          linked = true;
          // Stamped at once after the link (which changed the file's ctime and link
          // count), before the name has been visible for more than a moment.
          stamp = this.#sent.stamp(fs, target);
        } catch (error) {
          failed(error);
        }
      }
      // The marker is durable (its own fsync; its creation in an earlier journal
      // transaction than the link, or the same one when written here) and the
      // batch's fsync of ready/ commits the link (see docs/mailbox.md,
      // "Durability"); undone, neither remains.
      batch.step(
        dir,
        () => {
          fs.unlinkSync(target);
          fs.unlinkSync(marker);
        },
        handle,
      );
      if (into === "processing") return;
      this.#sent.remember(target, stamp, message);
      // While ready/ is fsynced: should that fail, the link is undone and the record
      // names a file that is not there, which no reader uses (it lists the files first).
      if (stamp) {
        const record = recordBody(message, stamp);
        batch.whileCommitting(() => appendRecords(fs, this.paths.index(recipient), [record]));
      }
      this.#queues.gained(recipient, index, (i) => i.insert({ name, id, createdAtUtc: message.createdAtUtc }));
    });
  }

  /** Makes `count` spare markers in the background, for sends coming soon (see SpareMarkers). */
  reserve(count: number): Promise<void> {
    return this.#spares.reserve(count);
  }

  async claim(agentName: AgentName, only?: ClaimFilter): Promise<MailboxMessage | null> {
    const agent = assertAgentName(agentName);
    if (this.#seenEmpty(agent)) return null;
    const message = await this.#batched(`claim for ${agent}`, (batch) => this.#claimLocked(agent, batch, only));
    if (message) void this.#makeDone(agent);
    return message;
  }

  async claimMany(agentName: AgentName, limit: number): Promise<MailboxMessage[]> {
    const agent = assertAgentName(agentName);
    if (this.#seenEmpty(agent)) return [];
    const claimed = await this.#batched(`claim for ${agent}`, async (batch) => {
      const claimed: MailboxMessage[] = [];
      while (claimed.length < limit) {
        let message: MailboxMessage | null;
        try {
          message = await this.#claimLocked(agent, batch);
        } catch (error) {
          // Those claimed already are the caller's (the batch makes them durable);
          // the failure comes back on the next claim.
          if (claimed.length > 0) break;
          throw error;
        }
        if (!message) break;
        claimed.push(message);
      }
      return claimed;
    });
    if (claimed.length > 0) void this.#makeDone(agent);
    return claimed;
  }

  async ack(input: MailboxMessage): Promise<void> {
    const message = this.#checked.valid(input);
    await this.#madeDoneFor(message);
    await this.#batched(`ack ${message.id}`, (batch) => this.#ackLocked(message, batch));
  }

  /**
   * The ack and the claim under one take of the locks: the same two durable
   * moves, with no other store's operation between them, and half the lock
   * traffic. A failed ack claims nothing.
   */
  async ackAndClaim(input: MailboxMessage, agentName: AgentName): Promise<MailboxMessage | null> {
    const done = this.#checked.valid(input);
    const agent = assertAgentName(agentName);
    await this.#madeDoneFor(done);
    return this.#batched(`ack ${done.id}`, async (batch) => {
      await this.#ackLocked(done, batch);
      return this.#claimLocked(agent, batch);
    });
  }

  /**
   * Whether `agent`'s ready/ is empty as this process last saw it under the lock
   * and has not changed since (its mtime, see ReadyQueues): a claim then finds
   * nothing without taking the lock or waiting for a batch's commit. Every
   * agent looks between the steps of each turn, and 32 teammates looking at
   * once waited for each other's batch. A send by another process that lands
   * just after this look is claimed by the next one, as it would be had this
   * claim run a moment earlier; a send of this process updates the queue in
   * the same synchronous step as its link.
   */
  #seenEmpty(agent: AgentName): boolean {
    if (this.#adding.has(agent)) return false;
    try {
      return this.#queues.current(agent)?.size === 0;
    } catch {
      // ready/ gone or unreadable: the locked claim says what it is.
      return false;
    }
  }

  /**
   * Runs a move into `agent`'s ready/ that awaits between the move and its
   * queue's update (a release, a recover): meanwhile its claims take the lock,
   * which the move holds, rather than trust a queue that does not show it yet.
   */
  async #addingTo<T>(agent: AgentName, move: () => Promise<T>): Promise<T> {
    this.#adding.set(agent, (this.#adding.get(agent) ?? 0) + 1);
    try {
      return await move();
    } finally {
      const left = this.#adding.get(agent)! - 1;
      if (left === 0) this.#adding.delete(agent);
      else this.#adding.set(agent, left);
    }
  }

  async #claimLocked(agent: AgentName, batch: DurableBatch, only?: ClaimFilter): Promise<MailboxMessage | null> {
    // Once prepared, an agent is not looked for on every claim: the freshness
    // check of its queue stats ready/ anyway, and finds it gone if it was removed.
    if (!this.#preparedAgents.has(agent)) {
      if (!pathExists(this.paths.agentDir(agent), this.#fs)) return null;
      this.#prepareAgent(agent);
    }
    let index: ReadyIndex;
    try {
      index = this.#queues.current(agent) ?? (await this.#queues.fresh(agent));
    } catch (error) {
      if (!isErrno(error, "ENOENT") || pathExists(this.paths.agentDir(agent), this.#fs)) throw error;
      // Removed since this store prepared it (a state dir cleaned up): nothing to claim.
      this.#preparedAgents.delete(agent);
      return null;
    }
    const readyDir = this.paths.stateDirOf(agent, "ready");
    // Without a filter the head is always the next to look at (each look removes
    // it or returns); with one, the entries are walked past those it leaves.
    const walk = only === undefined ? undefined : index.inOrder();
    let at = 0;
    const next = () => (walk === undefined ? index.head() : walk[at++]);
    for (let entry = next(); entry; entry = next()) {
      const path = `${readyDir}/${entry.name}`;
      const sent = this.#sent.take(this.#fs, path);
      const checked =
        sent !== undefined
          ? { ok: true as const, message: sent }
          : readMessageAt(this.#fs, path, { id: entry.id, recipient: agent }, this.maxContentBytes);
      if (checked === "gone") {
        index.remove(entry.name);
        continue;
      }
      if (!checked.ok) {
        this.#quarantineFrom(agent, "ready", entry.name, checked.reason, index);
        continue;
      }
      const message = checked.message;
      if (!keyedByName(entry) && message.createdAtUtc !== entry.createdAtUtc) {
        // The file changed under its name since it was indexed: order by what it says now
        // (a filtered walk leaves it to the next claim, its place in the order unknown).
        index.insert({ name: entry.name, id: message.id, createdAtUtc: message.createdAtUtc });
        continue;
      }
      if (!claimable(message, only)) continue;
      const moved = await moveDurably(
        this.#fs,
        { from: readyDir, to: this.paths.stateDirOf(agent, "processing"), name: entry.name, what: `claim ${message.id}` },
        batch,
      );
      if (moved === "exists") {
        this.#quarantineFrom(agent, "ready", entry.name, `a message with id ${message.id} is already in processing/`, index);
        continue;
      }
      this.#queues.lost(agent, index, entry.name);
      this.#checked.remember(message);
      return message;
    }
    return null;
  }

  async #ackLocked(message: MailboxMessage, batch: DurableBatch): Promise<void> {
    const { id, recipient: agent } = message;
    const done = this.paths.stateDirOf(agent, "done");
    // No look before the move: the rename itself refuses a file already in done/,
    // and moves nothing when the message is not in processing/.
    const move = () =>
      moveDurably(this.#fs, { from: this.paths.stateDirOf(agent, "processing"), to: done, name: fileNameOf(id), what: `ack ${id}`, missingOk: true }, batch);
    let moved: MoveOutcome;
    try {
      this.#madeDone(agent);
      moved = await move();
      // done/ gone since this store made it (the mailbox removed and made again): made again.
      if (moved === "missing" && !pathExists(done, this.#fs)) {
        this.#doneDirs.delete(agent);
        this.#madeDone(agent);
        moved = await move();
      }
    } catch (error) {
      throw error instanceof MailboxStorageError ? error : storageError(`ack ${id}`, error, "the message stays in processing/");
    }
    if (moved === "moved") return;
    const target = this.paths.messageFile(agent, "done", id);
    if (moved === "missing" && !pathExists(target, this.#fs)) throw notInProcessing(message, "ack");
    // A late ack (the message was recovered, re-claimed and finished elsewhere)
    // succeeds only for the very same message, and never re-queues it.
    const found = readMessageAt(this.#fs, target, { id, recipient: agent });
    if (found !== "gone" && found.ok && sameMessage(found.message, message)) return;
    throw new AckConflictError(id);
  }

  async release(input: MailboxMessage): Promise<void> {
    const message = this.#checked.valid(input);
    const { id, recipient: agent } = message;
    await this.#locked(async () => {
      this.#expectInProcessing(message, this.paths.messageFile(agent, "processing", id), "release");
      await this.#addingTo(agent, async () => {
        const index = this.#queues.current(agent);
        const moved = await moveDurably(this.#fs, {
          from: this.paths.stateDirOf(agent, "processing"),
          to: this.paths.stateDirOf(agent, "ready"),
          name: fileNameOf(id),
          what: `release ${id}`,
        });
        if (moved === "exists") {
          throw new MailboxStorageError(`cannot release ${id}: ready/ already holds a message with this id; it stays in processing/`);
        }
        this.#queues.gained(agent, index, (i) => i.insert({ name: fileNameOf(id), id, createdAtUtc: message.createdAtUtc }));
      });
    });
  }

  async quarantine(input: MailboxMessage, reason: string): Promise<void> {
    const message = this.#checked.valid(input);
    const { id, recipient: agent } = message;
    await this.#locked(() => {
      this.#expectInProcessing(message, this.paths.messageFile(agent, "processing", id), "quarantine");
      this.#quarantineFrom(agent, "processing", fileNameOf(id), reason, undefined);
    });
  }

  async recover(agentName: AgentName): Promise<RecoverResult> {
    const agent = assertAgentName(agentName);
    // Batched with the sends and claims of the same moment (a Lead spawning 32
    // teammates recovers each one's mailbox just before its first task goes out):
    // one take of the lock, its moves made durable by the batch's fsync.
    return this.#batched(`recover ${agent}`, async (batch) => {
      const result: RecoverResult = { recovered: [], skipped: [] };
      if (!pathExists(this.paths.agentDir(agent), this.#fs)) return result;
      this.#prepareAgent(agent);
      const fs = this.#fs;

      const processing = this.paths.stateDirOf(agent, "processing");
      for (const name of fs.readdirSync(processing).sort()) {
        const checked = checkFile(fs, agent, processing, name, this.maxContentBytes);
        if (checked === "gone") continue;
        if (!checked.ok) {
          this.#quarantineFrom(agent, "processing", name, checked.reason, undefined);
          result.skipped.push({ agent, file: name, reason: `quarantined: ${checked.reason}` });
          continue;
        }
        const { id } = checked.message;
        const moved = await this.#addingTo(agent, async () => {
          const index = this.#queues.current(agent);
          const moved = await moveDurably(fs, { from: processing, to: this.paths.stateDirOf(agent, "ready"), name, what: `recover ${id}` }, batch);
          if (moved !== "exists") this.#queues.gained(agent, index, (i) => i.insert({ name, id, createdAtUtc: checked.message.createdAtUtc }));
          return moved;
        });
        if (moved === "exists") {
          result.skipped.push({ agent, file: name, reason: "ready/ already holds a message with this id" });
          continue;
        }
        result.recovered.push({ agent, id });
      }
      return result;
    });
  }

  async list(options: ListOptions = {}): Promise<AgentMailboxListing[]> {
    if (options.agent !== undefined) assertAgentName(options.agent);
    return this.#readLocked((locked) => listMailboxes(this.paths, this.#fs, this.#agentNames(), options, this.maxContentBytes, locked));
  }

  async agents(): Promise<AgentName[]> {
    return this.#agentNames();
  }

  async find(id: string): Promise<FoundMessage | null> {
    assertMessageId(id);
    const look = () => findMessage(this.paths, this.#fs, this.#agentNames(), id, this.maxContentBytes);
    // First without the lock: a message file is only ever replaced whole (renamed or
    // linked into place), so a valid one read now is where the message was at that
    // moment — what a locked read just before or after the move would have said. Only
    // a miss or an unreadable file (perhaps a move half done) is looked up again
    // under the lock. Taking it costs a reading command ~1 ms of start-up: flock
    // loads bun:ffi.
    const seen = look();
    if (seen?.message && seen.state !== "quarantine") return seen;
    return this.#readLocked(look);
  }

  async prune(before: Date): Promise<PruneResult> {
    return this.#locked(() => pruneMailboxes(this.paths, this.#fs, this.#agentNames(), before));
  }

  // ---- internals ----------------------------------------------------------

  /**
   * Runs a send, claim or ack as part of the next take of the lock: the calls
   * queued meanwhile are done one after another in that take, their fsyncs once
   * per directory at its end (see group-commit.ts), and each returns only then.
   */
  #batched<T>(what: string, work: (batch: DurableBatch) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queued.push({ what, work: work as QueuedCall["work"], resolve: resolve as (value: unknown) => void, reject });
      this.#startDrain();
    });
  }

  #startDrain(): void {
    this.#draining ??= groupStart()
      .then(() => this.#drain())
      .finally(() => {
        this.#draining = undefined;
        // A call queued after the last pass looked, before this ran, found a drain still set.
        if (this.#queued.length > 0) this.#startDrain();
      });
  }

  async #drain(): Promise<void> {
    while (this.#queued.length > 0) {
      let calls: QueuedCall[] = [];
      const done: { call: QueuedCall; value: unknown }[] = [];
      try {
        await this.#locked(async () => {
          // Taken once the lock is: every call queued while waiting for it joins.
          calls = this.#queued.splice(0);
          const batch = new DurableBatch(this.#fs);
          for (const call of calls) {
            try {
              done.push({ call, value: await call.work(batch) });
            } catch (error) {
              call.reject(error);
            }
          }
          await batch.commit();
        });
      } catch (error) {
        this.#queues.clear();
        this.#sent.clear();
        // Not taken (the lock), or not durable and undone: none of the calls happened.
        const failure = error instanceof BatchFailure ? error : undefined;
        const outcome = failure === undefined ? "nothing was changed" : failure.undone ? "it was undone" : "it could not be undone; run agent mailbox recover";
        // The lock not taken: the calls still queued fail, the next call tries again.
        if (calls.length === 0) calls = this.#queued.splice(0);
        for (const call of failure === undefined ? calls.filter((c) => !done.some((d) => d.call === c)) : []) call.reject(error);
        for (const { call } of done) call.reject(failure ? storageError(call.what, failure.error, outcome) : error);
        continue;
      }
      for (const { call, value } of done) call.resolve(value);
    }
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
      this.#queues.clear();
      this.#sent.clear();
      throw error;
    }
  }

  /**
   * For reads only: under the lock when this process may take it; on a state dir it
   * may not write to (a read-only mount, another user's files) the lock cannot be
   * created, so it reads without it — a snapshot that can miss or double-count a
   * message that moves meanwhile, which is all a reader of such a dir can have.
   */
  async #readLocked<T>(work: (locked: boolean) => T | Promise<T>): Promise<T> {
    try {
      return await this.#locked(() => work(true));
    } catch (error) {
      if (!isStateDirReadOnly(error)) throw error;
      return work(false);
    }
  }

  /**
   * The agent's state directories, made when a spawn asks (beside its other
   * steps), not inside the batch of its first send, which holds the lock for every
   * sender meanwhile. Made on the thread pool (see openWhereCheap): the other
   * agents' steps go on while the inodes are allocated.
   */
  async prepare(agentName: AgentName): Promise<void> {
    const agent = assertAgentName(agentName);
    // On the event loop's next turn: what else the spawns of this one began goes
    // first — each new teammate's runner, and its first model request, sent ahead.
    // 32 spawns' 96 mkdirs cost 1–100 ms on this machine's ext4 (inode
    // allocations of 0.01–1 ms, by how much was deleted in the last minutes).
    await groupStart();
    try {
      await this.#prepareAgentOffLoop(agent);
      this.#queues.noteEmpty(agent);
    } catch (error) {
      throw storageError(`prepare the mailbox of ${agent}`, error, "nothing was sent");
    }
  }

  /**
   * Makes the directories every agent's mailbox needs: ready/ and processing/.
   * done/ is made by the first ack (#madeDone), quarantine/ by the first
   * quarantine: a spawn of 32 teammates makes 64 fewer inodes, and on this
   * machine's ext4 an inode costs 0.01–1 ms of kernel time.
   */
  #prepareAgent(agent: AgentName): void {
    if (this.#preparedAgents.has(agent)) return;
    for (const state of EAGER_STATES) ensureDir(this.paths.stateDirOf(agent, state), this.#fs);
    ensureDir(this.paths.ids, this.#fs);
    this.#preparedAgents.add(agent);
  }

  /** #prepareAgent, its directories made on the thread pool, one after another (each makes the agent's own first). */
  async #prepareAgentOffLoop(agent: AgentName): Promise<void> {
    if (this.#preparedAgents.has(agent)) return;
    for (const state of EAGER_STATES) await ensureDirWhereCheap(this.paths.stateDirOf(agent, state), this.#fs);
    await ensureDirWhereCheap(this.paths.ids, this.#fs);
    this.#preparedAgents.add(agent);
  }

  /**
   * #madeDone before an ack queues (so its batch, which holds the lock, does not
   * make it), on the thread pool (see openWhereCheap); a failure is left to the
   * ack's batch, which tries again and reports it.
   */
  #madeDoneFor(message: MailboxMessage): Promise<void> {
    return this.#makeDone(message.recipient);
  }

  /**
   * Makes `agent`'s done/ unless this store made or found it; one making at a
   * time, which every caller meanwhile waits for. Begun by a claim too, so the
   * inode is allocated while the message is worked, not on the way to its ack.
   * A failure is left to the ack's batch, which tries again and reports it.
   */
  #makeDone(agent: AgentName): Promise<void> {
    if (this.#doneDirs.has(agent)) return Promise.resolve();
    let making = this.#doneMaking.get(agent);
    if (!making) {
      making = ensureDirWhereCheap(this.paths.stateDirOf(agent, "done"), this.#fs)
        .then(() => void this.#doneDirs.add(agent))
        .catch(() => {})
        .finally(() => this.#doneMaking.delete(agent));
      this.#doneMaking.set(agent, making);
    }
    return making;
  }

  /**
   * Makes `agent`'s done/ unless this store made or found it already, in an
   * ack's batch: for one removed or made elsewhere meanwhile. The directory's
   * entry is committed with the first ack's fsync of done/, the journal's
   * transactions being in order, as every mailbox directory's is.
   */
  #madeDone(agent: AgentName): void {
    if (this.#doneDirs.has(agent)) return;
    ensureDir(this.paths.stateDirOf(agent, "done"), this.#fs);
    this.#doneDirs.add(agent);
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

  #expectInProcessing(message: MailboxMessage, source: string, op: string): void {
    const current = readMessageAt(this.#fs, source, { id: message.id, recipient: message.recipient });
    if (current === "gone") throw notInProcessing(message, op);
    if (!current.ok || !sameMessage(current.message, message)) throw differentInProcessing(message, op);
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
    if (from === "ready") {
      this.#queues.lost(agent, index, name);
      this.#sent.forget(`${this.paths.stateDirOf(agent, "ready")}/${name}`);
    }
  }
}

interface QueuedCall {
  what: string;
  work: (batch: DurableBatch) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Creates `marker` exclusively (or renames a spare to it, see SpareMarkers),
 * writes `text()` and fsyncs it, off the event loop. Returns what it made, or undefined when it made nothing durable (the
 * marker was there, or a step failed): it never removes a file, since outside
 * the lock it cannot know the marker is still its own.
 */
/**
 * The marker, written and made durable outside the lock; its stat then (which
 * file this call made), or undefined when it could not be (the marker there
 * already, a failed write): the send settles that under the lock.
 */
async function writeMarkerEarly(fs: FsOps, marker: string, spares: SpareMarkers, text: () => string): Promise<BigIntStats | undefined> {
  try {
    const content = text();
    const spare = await spares.writeAs(marker, content);
    if (spare) return spare;
    await writeNewFileDurably(marker, content, fs);
    return fs.lstatSync(marker, { bigint: true });
  } catch {
    return undefined;
  }
}

/** The states every mailbox has from the start; done/ and quarantine/ are made when first used. */
const EAGER_STATES = ["ready", "processing"] as const satisfies readonly MailboxState[];

function isStateDirReadOnly(error: unknown): boolean {
  return error instanceof LockError && error.readOnly;
}

