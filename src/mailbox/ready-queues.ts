import type { AgentName } from "../core/agent-name.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { Pacer } from "../storage/pacer.ts";
import { checkFile } from "./message-file.ts";
import type { MailboxPaths } from "./paths.ts";
import { TIME_WIDTH, appendRecords, inFifoOrder, matchRecords, readIndex, recordBody, rewriteIndex } from "./mailbox-index.ts";
import { type IndexedEntry, ReadyIndex, RecordEntry, entryFromName, isKeyedName } from "./ready-index.ts";

/** Up to this many files without a key in their name are read rather than looked up in the index. */
const READ_WITHOUT_INDEX = 32;
/**
 * Nor is the index read when it is larger than this many bytes per file to look
 * up: reading one small file costs about what scanning 2 KB of index (some 16
 * records) does, and a Lead's index holds every message it ever got (done ones
 * too, until pruned) — 100 results waiting over 50 000 finished are read.
 */
const INDEX_BYTES_PER_READ = 2048;

function sizeOf(fs: FsOps, path: string): number {
  try {
    return fs.statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * This process's cached ready/ queue of each agent, and when to trust it.
 *
 * A queue matches ready/ as long as the directory's mtime is the one recorded
 * with it. Every locked *addition* to ready/ sets the mtime to a value above the
 * one it found, so an addition by any process is seen even when it falls in the
 * clock tick of the last change; files dropped there by hand move it as well.
 * Removals need no signal: a cached entry that is gone is dropped when reached.
 *
 * All methods but noteEmpty run under the mailbox lock.
 */
export class ReadyQueues {
  readonly #queues = new Map<AgentName, ReadyIndex>();

  constructor(
    private readonly paths: MailboxPaths,
    private readonly fs: FsOps,
    /** Moves a bad entry found in ready/ to quarantine. */
    private readonly quarantine: (agent: AgentName, name: string, reason: string) => void,
    /** Larger messages are quarantined unread (see readMessageAt). */
    private readonly maxContentBytes: number,
  ) {}

  /** Forgets every cached queue (after a failure they may not match the disk). */
  clear(): void {
    this.#queues.clear();
  }

  /** The queue of `agent`, brought up to date: ready/ is re-read only when it changed. */
  async fresh(agent: AgentName): Promise<ReadyIndex> {
    let queue = this.#queues.get(agent);
    if (queue && queue.stamp === this.#stamp(agent)) return queue;
    queue ??= new ReadyIndex();
    this.#queues.set(agent, queue);
    const readyDir = this.paths.stateDirOf(agent, "ready");
    const listed = this.fs.readdirSync(readyDir);
    const known = queue.size > 0;
    if (known) {
      const present = new Set(listed);
      for (const name of [...queue.names()]) if (!present.has(name)) queue.remove(name);
    }
    // Time-keyed names give their FIFO key without a read; other names take it
    // from the index, or from the file when the index has no record of it. Every
    // entry's file is still read and checked when it is claimed (kind, content, and
    // that its time is the one it was ordered by).
    const keyedNames: string[] = [];
    const unnamed: string[] = [];
    for (const name of listed) {
      if (known && queue.has(name)) continue;
      if (isKeyedName(name)) keyedNames.push(name);
      else unnamed.push(name);
    }
    // Sorted as names, time-keyed ones come out in FIFO order (see timeKeyedId).
    const keyed = keyedNames.sort().map((name) => entryFromName(name)!);
    const others = await this.#keysOf(agent, readyDir, unnamed);
    queue.insertMany(keyed, others.entries, others.inOrder);
    queue.stamp = this.#stamp(agent);
    return queue;
  }

  /**
   * The FIFO keys of ready/ files whose names do not carry them. A few (what other
   * processes sent since the last look) are read; more (a fresh process's first
   * claim) are looked up in the index, and only the files it has no record of are
   * read — and recorded, so the next fresh process need not (migration from a
   * mailbox written before the index, or a record lost in a crash).
   *
   * The index is walked in the order it was written, which is nearly always FIFO
   * order already (a message is sent just after it is made): matchRecords says
   * whether it was, and the entries then need no sort.
   */
  async #keysOf(agent: AgentName, readyDir: string, names: string[]): Promise<{ entries: IndexedEntry[]; inOrder: boolean }> {
    const indexPath = this.paths.index(agent);
    const useIndex = names.length > READ_WITHOUT_INDEX && names.length * INDEX_BYTES_PER_READ > sizeOf(this.fs, indexPath);
    const match = useIndex ? matchRecords(this.fs, indexPath, names) : undefined;
    const bad = useIndex ? (match?.bad ?? 1) : 0;
    const unread = match?.unmatched ?? names;
    const indexed: IndexedEntry[] = new Array(match?.matched.length ?? 0);
    if (match) for (let k = 0; k < match.matched.length; k++) indexed[k] = new RecordEntry(names[match.matched[k]!]!, match.times, k * TIME_WIDTH);
    const read: IndexedEntry[] = [];
    const added: string[] = [];
    const pacer = new Pacer();
    for (const name of unread) {
      await pacer.step();
      const checked = checkFile(this.fs, agent, readyDir, name, this.maxContentBytes);
      if (checked === "gone") continue;
      if (!checked.ok) {
        this.quarantine(agent, name, checked.reason);
        continue;
      }
      const { message } = checked;
      read.push({ name, id: message.id, createdAtUtc: message.createdAtUtc });
      added.push(recordBody(message, checked.stats));
    }
    if (useIndex) {
      // A damaged index is written again whole, without the bad lines; else what was
      // read is appended, in FIFO order as a first claim wants it.
      if (bad > 0) rewriteIndex(this.fs, indexPath, [...readIndex(this.fs, indexPath).records.values(), ...added]);
      else appendRecords(this.fs, indexPath, inFifoOrder(added));
    }
    return { entries: read.length === 0 ? indexed : [...indexed, ...read], inOrder: read.length === 0 && (match?.inOrder ?? true) };
  }

  /**
   * Outside the lock, for a mailbox this process just made: records its ready/ as
   * empty when it is, so the claims that find nothing need no lock (see
   * FileMailboxStore#seenEmpty). The stamp is read before the listing: a message
   * added after it moves the mtime past it, one added before is listed. A queue
   * already kept (a locked call may be filling it) is left as it is.
   */
  noteEmpty(agent: AgentName): void {
    if (this.#queues.has(agent)) return;
    const stamp = this.#stamp(agent);
    if (this.fs.readdirSync(this.paths.stateDirOf(agent, "ready")).length > 0) return;
    const queue = new ReadyIndex();
    queue.stamp = stamp;
    this.#queues.set(agent, queue);
  }

  /** The cached queue of `agent` if it still matches ready/; call before changing ready/. */
  current(agent: AgentName): ReadyIndex | undefined {
    const queue = this.#queues.get(agent);
    return queue && queue.stamp === this.#stamp(agent) ? queue : undefined;
  }

  /**
   * Records that this process just added to ready/ of `agent`, so other processes
   * re-read it, and applies the same change to `queue` — current before the change,
   * from `current()` or `fresh()` — so this one does not have to.
   */
  gained(agent: AgentName, queue: ReadyIndex | undefined, update: (queue: ReadyIndex) => void): void {
    const now = this.#stamp(agent);
    const seen = queue?.stamp ?? now;
    // Strictly above both what this process last saw and what is there now.
    const floor = (seen > now ? seen : now) + 1_000n;
    const wall = BigInt(Date.now()) * 1_000_000n;
    const next = wall > floor ? wall : floor;
    const seconds = Number(next / 1_000n) / 1_000_000;
    this.fs.utimesSync(this.paths.stateDirOf(agent, "ready"), seconds, seconds);
    if (!queue) return;
    update(queue);
    queue.stamp = this.#stamp(agent);
  }

  /** Records that this process just took `name` out of ready/ of `agent`. */
  lost(agent: AgentName, queue: ReadyIndex | undefined, name: string): void {
    if (!queue) return;
    queue.remove(name);
    // The kernel moved the mtime; the queue still matches the directory.
    queue.stamp = this.#stamp(agent);
  }

  #stamp(agent: AgentName): bigint {
    return this.fs.statSync(this.paths.stateDirOf(agent, "ready"), { bigint: true }).mtimeNs;
  }
}
