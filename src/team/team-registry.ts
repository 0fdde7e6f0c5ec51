import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { AgentName } from "../core/agent-name-schema.ts";
import { type MailboxMessage, MessageId, UtcInstant } from "../core/message.ts";
import { ensureDir, isErrno, writeFileAtomicOffLoop } from "../storage/atomic-file.ts";
import { parseStateText } from "../storage/state-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { TeammateWorktree } from "../worktrees/teammate-worktree.ts";
import { lazySchema } from "../core/lazy-schema.ts";
import { leaseTokenIn } from "../leases/file-leases.ts";

export const TEAMMATE_STATES = ["running", "idle", "failed", "shutdown"] as const;
export const TeammateState = lazySchema(() => z.enum(TEAMMATE_STATES));
export type TeammateState = z.infer<typeof TeammateState>;

/**
 * A teammate spawned with `plan_mode_required`: `drafting` (read-only, no plan
 * open), `submitted` (its plan `requestId` waits for the Lead's review_plan),
 * `approved` (lifted to its normal permission mode).
 */
export const PLAN_STATES = ["drafting", "submitted", "approved"] as const;
export const TeammatePlan = lazySchema(() => z.strictObject({ state: z.enum(PLAN_STATES), requestId: MessageId.optional() }));
export type TeammatePlan = z.infer<typeof TeammatePlan>;

export const TeammateRecord = lazySchema(() =>
  z.strictObject({
    name: AgentName,
    role: z.string().min(1),
    state: TeammateState,
    createdAtUtc: UtcInstant,
    updatedAtUtc: UtcInstant,
    /** Why it failed, when it did. */
    failure: z.string().optional(),
    /** Set while spawning: the id of the first task, until it is in the teammate's mailbox. */
    pendingTaskId: z.string().optional(),
    /** The definition (`.agent/agents/<agent>.md`) it was spawned from, so a restore rebuilds it alike. */
    agent: z.string().min(1).optional(),
    /** The model its requests name, when not the runtime's. */
    model: z.string().min(1).optional(),
    /** Present when spawned with plan_mode_required (absent in older team.json files). */
    plan: TeammatePlan.optional(),
    /** Its git worktree and branch, when spawned with `isolation: "worktree"` (docs/team-worktrees.md). */
    worktree: TeammateWorktree.optional(),
    /** When idle, it claims unblocked tasks of the task graph (docs/team.md#self-claiming-teammates). */
    autoClaim: z.boolean().optional(),
    /** Globs of workspace paths it owns: another agent's write there asks the Lead's side (docs/files.md#ownership). */
    owns: z.array(z.string().min(1)).optional(),
  }),
);
export type TeammateRecord = z.infer<typeof TeammateRecord>;

export const TeamFile = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    teammates: z.array(TeammateRecord),
  }),
);
export type TeamFile = z.infer<typeof TeamFile>;

/**
 * The teammates of one session, one record a name. The runtime sees only this;
 * the file backend keeps them in `team.json`, the PostgreSQL one in rows. A
 * write returns once it is durable.
 */
export interface TeamRegistry {
  /** Every teammate, oldest first. */
  read(): Promise<TeammateRecord[]>;
  /**
   * As read(), once every write under way has landed: a write whose fence was
   * checked before a take of the lease is in it. Absent where a read already
   * sees such a write (PostgreSQL: the take waits for the writing transaction).
   */
  readSettled?(): Promise<TeammateRecord[]>;
  /** Adds the teammate, or replaces the one of the same name. */
  put(record: TeammateRecord): Promise<void>;
  /** Removes the teammate of that name (nothing when there is none). */
  remove(name: string): Promise<void>;
  /**
   * Several changes in one durable write (one file write, one transaction):
   * each record added or replaced, each name in `removed` removed. Either all
   * are stored or none. A name in `fences` is changed only while its lease's
   * token is the one given (its writer still holds it: checked under the
   * write's lock, so a take of the lease comes wholly before or after); the
   * others are refused and returned, the rest stored.
   */
  change(put: TeammateRecord[], removed: string[], fences?: RegistryFences): Promise<string[]>;
  /**
   * Where the store can (PostgreSQL): stores `put` and sends `task` to its
   * recipient's ready in one transaction. A spawn clears its first task's
   * `pendingTaskId` with it, so the task is never visible beside a record that
   * still calls it pending (a worker skips such a teammate).
   */
  readonly changeWithTask?: ((put: TeammateRecord[], task: MailboxMessage) => Promise<void>) | undefined;
}

/** Teammate name -> the lease token its writer holds (see TeamRegistry.change). */
export type RegistryFences = ReadonlyMap<string, string>;

/** `<state-dir>/team.json`: the teammates, written atomically, validated when read. */
export class FileTeamRegistry implements TeamRegistry {
  readonly path: string;
  /**
   * The teammates as the file was last read or written here, with its text: a
   * file that reads the same is not parsed and validated again. Each of a team's
   * writes parsed the whole file and validated every record twice (at 50
   * teammates ~160 KB of garbage a write); now it reads the text and compares.
   */
  #known: { text: string; teammates: TeammateRecord[] } | undefined;

  constructor(readonly stateDir: string) {
    this.path = join(stateDir, "team.json");
  }

  async read(): Promise<TeammateRecord[]> {
    return [...this.#read()];
  }

  /** Under team.lock: a write checked against the lease before it was taken has landed. */
  async readSettled(): Promise<TeammateRecord[]> {
    let teammates: TeammateRecord[] = [];
    await this.#locked(async () => {
      teammates = [...this.#read()];
    });
    return teammates;
  }

  // Each read and its write run under `team.lock`: the Lead's runtime and
  // `agent worker` processes (docs/worker.md) change the same team.json, each
  // only the teammates it runs, and none may undo another's change.
  async put(record: TeammateRecord): Promise<void> {
    await this.change([record], []);
  }

  async remove(name: string): Promise<void> {
    await this.change([], [name]);
  }

  async change(put: TeammateRecord[], removed: string[], fences?: RegistryFences): Promise<string[]> {
    const valid = put.map((record) => TeammateRecord.parse(record));
    let refused: string[] = [];
    await this.#locked(async () => {
      // Under team.lock: a lease taken after this look is followed by its holder's
      // writes, which wait for this lock, so a refused holder's state never lands after theirs.
      refused = [...(fences ?? [])].filter(([name, token]) => leaseTokenIn(this.stateDir, name) !== token).map(([name]) => name);
      const gone = removed.filter((name) => !refused.includes(name));
      const kept = valid.filter((record) => !refused.includes(record.name));
      const before = this.#read();
      let teammates = before.filter((t) => !gone.includes(t.name));
      for (const record of kept) {
        const at = teammates.findIndex((t) => t.name === record.name);
        teammates = at < 0 ? [...teammates, record] : teammates.with(at, record);
      }
      if (kept.length > 0 || teammates.length !== before.length) await this.#write(teammates);
    });
    return refused;
  }

  #locked(change: () => Promise<void>): Promise<void> {
    ensureDir(this.stateDir);
    return withFileLock(join(this.stateDir, "team.lock"), change);
  }

  #read(): TeammateRecord[] {
    const text = readTextIfAny(this.path);
    if (text === undefined) {
      this.#known = undefined;
      return [];
    }
    if (this.#known?.text === text) return this.#known.teammates;
    const { teammates } = parseStateText(this.path, text, TeamFile);
    this.#known = { text, teammates };
    return teammates;
  }

  async #write(teammates: TeammateRecord[]): Promise<void> {
    ensureDir(this.stateDir);
    // Every record is valid already: read through the schema, or parsed by change().
    const file: TeamFile = { version: 1, teammates: sortTeammates(teammates) };
    const text = `${JSON.stringify(file, null, 2)}\n`;
    this.#known = undefined;
    // Its fsyncs off the event loop: the other agents' model calls go on meanwhile.
    await writeFileAtomicOffLoop(this.path, text);
    this.#known = { text, teammates: file.teammates };
  }
}

function readTextIfAny(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** Oldest first, as team.json has always listed them. */
export function sortTeammates(teammates: TeammateRecord[]): TeammateRecord[] {
  return [...teammates].sort((a, b) => a.createdAtUtc.localeCompare(b.createdAtUtc));
}
