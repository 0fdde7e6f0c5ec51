import type { AgentName } from "../core/agent-name.ts";
import type { FsOps } from "../storage/fs-ops.ts";
import { Pacer } from "../storage/pacer.ts";
import { checkFile } from "./message-file.ts";
import type { MailboxPaths } from "./paths.ts";
import { type IndexedEntry, ReadyIndex, entryFromName } from "./ready-index.ts";

/**
 * This process's cached ready/ queue of each agent, and when to trust it.
 *
 * A queue matches ready/ as long as the directory's mtime is the one recorded
 * with it. Every locked *addition* to ready/ sets the mtime to a value above the
 * one it found, so an addition by any process is seen even when it falls in the
 * clock tick of the last change; files dropped there by hand move it as well.
 * Removals need no signal: a cached entry that is gone is dropped when reached.
 *
 * All methods run under the mailbox lock.
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
    // Sorted as names: time-keyed ones come out in FIFO order (see timeKeyedId).
    const listed = this.fs.readdirSync(readyDir).sort();
    const known = queue.size > 0;
    if (known) {
      const present = new Set(listed);
      for (const name of [...queue.names()]) if (!present.has(name)) queue.remove(name);
    }
    // Time-keyed names give their FIFO key without a read; only other names are
    // opened here. A named entry's file is still read and checked when it is
    // claimed (kind, content, and that its time matches its name).
    const keyed: IndexedEntry[] = [];
    const others: IndexedEntry[] = [];
    const pacer = new Pacer();
    for (const name of listed) {
      if (known && queue.has(name)) continue;
      const named = entryFromName(name);
      if (named) {
        keyed.push(named);
        continue;
      }
      await pacer.step();
      const checked = checkFile(this.fs, agent, readyDir, name, this.maxContentBytes);
      if (checked === "gone") continue;
      if (!checked.ok) {
        this.quarantine(agent, name, checked.reason);
        continue;
      }
      others.push({ name, id: checked.message.id, createdAtUtc: checked.message.createdAtUtc });
    }
    queue.insertMany(keyed, others);
    queue.stamp = this.#stamp(agent);
    return queue;
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
