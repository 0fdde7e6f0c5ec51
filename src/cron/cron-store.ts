import { join } from "node:path";
import { z } from "zod";
import { AgentError } from "../core/errors.ts";
import { isMessageId, MessageId, UtcInstant } from "../core/message.ts";
import { ensureDir, writeFileAtomic } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { readStateFile } from "../storage/state-file.ts";
import { isValidCron } from "./cron-expression.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const CronJob = lazySchema(() =>
  z.strictObject({
    id: MessageId,
    cron: z.string().refine(isValidCron, "must be a 5-field cron expression"),
    prompt: z.string().min(1),
    recurring: z.boolean(),
    durable: z.boolean(),
    createdAtUtc: UtcInstant,
    /** The slot the job fires at next; a run is identified by it (see cronEventId). */
    nextRunAtUtc: UtcInstant,
    lastRunAtUtc: UtcInstant.optional(),
  }),
);
export type CronJob = z.infer<typeof CronJob>;

export const CronFile = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    jobs: z.array(CronJob.refine((job) => job.durable, { message: "only durable jobs are stored", path: ["durable"] })),
  }),
);
export type CronFile = z.infer<typeof CronFile>;

export class InvalidCronJobIdError extends AgentError {
  readonly code = "INVALID_CRON_JOB_ID";
  readonly category = "usage" as const;
  constructor(readonly jobId: string) {
    super(`invalid cron job id ${JSON.stringify(jobId)}: expected a canonical lowercase UUID; run \`agent cron list\` to see the ids`);
  }
}

export class CronJobNotFoundError extends AgentError {
  readonly code = "CRON_JOB_NOT_FOUND";
  readonly category = "not_found" as const;
  constructor(readonly jobId: string) {
    super(`no cron job ${jobId}; run \`agent cron list\` to see the durable jobs`);
  }
}

export function assertCronJobId(id: string): string {
  if (!isMessageId(id)) throw new InvalidCronJobIdError(id);
  return id;
}

/** A change to one job: the job as it should be, or null to remove it. */
export type CronChange = (job: CronJob) => CronJob | null;

/**
 * Where a session's durable jobs are kept. `rewrite` replaces them with what
 * `change` makes of the current ones, read and written under a lock every
 * process respects, so `agent cron cancel` in another process and the runtime
 * recording a run cannot undo each other's change.
 */
export interface CronTable {
  /** The durable jobs as stored now (none when nothing is stored). */
  read(): Promise<CronJob[]>;
  rewrite(change: (jobs: CronJob[]) => CronJob[]): Promise<void>;
}

/**
 * The scheduled jobs: durable ones in a CronTable (which the runtime never
 * sees), the others in this object only.
 */
export class CronStore {
  readonly #table: CronTable;
  readonly #memory = new Map<string, CronJob>();

  constructor(table: CronTable) {
    this.#table = table;
  }

  /** The durable jobs as stored now. */
  readDurable(): Promise<CronJob[]> {
    return this.#table.read();
  }

  /** Every job, durable and not, soonest first. */
  async list(): Promise<CronJob[]> {
    return [...(await this.readDurable()), ...this.#memory.values()].sort((a, b) => a.nextRunAtUtc.localeCompare(b.nextRunAtUtc));
  }

  async add(job: CronJob): Promise<void> {
    const valid = CronJob.parse(job);
    if (!valid.durable) {
      this.#memory.set(valid.id, valid);
      return;
    }
    await this.#table.rewrite((jobs) => [...jobs, valid]);
  }

  /** Applies `change` to job `id`; returns the job as it is now (null: removed), or undefined when there is no such job. */
  async update(id: string, change: CronChange): Promise<CronJob | null | undefined> {
    const inMemory = this.#memory.get(id);
    if (inMemory) {
      const next = change(inMemory);
      if (next === null) this.#memory.delete(id);
      else this.#memory.set(id, CronJob.parse(next));
      return next;
    }
    // Nothing to lock when there is no such job (e.g. a cancel with a wrong id).
    if (!(await this.readDurable()).some((job) => job.id === id)) return undefined;
    let result: CronJob | null | undefined;
    await this.#table.rewrite((jobs) => {
      const index = jobs.findIndex((job) => job.id === id);
      if (index < 0) return jobs;
      result = change(jobs[index]!);
      const rest = jobs.filter((job) => job.id !== id);
      return result === null ? rest : [...rest, CronJob.parse(result)];
    });
    return result;
  }

  /** Removes job `id`, returning it; throws CronJobNotFoundError when there is none. */
  async remove(id: string): Promise<CronJob> {
    let removed: CronJob | undefined;
    const outcome = await this.update(id, (job) => {
      removed = job;
      return null;
    });
    if (outcome === undefined || !removed) throw new CronJobNotFoundError(id);
    return removed;
  }
}

/** Durable jobs in `<state-dir>/cron.json` (written atomically, validated when read), changed under `cron.lock`. */
export class FileCronTable implements CronTable {
  readonly path: string;
  readonly #lockPath: string;

  constructor(readonly stateDir: string) {
    this.path = join(stateDir, "cron.json");
    this.#lockPath = join(stateDir, "cron.lock");
  }

  async read(): Promise<CronJob[]> {
    return readStateFile(this.path, CronFile)?.jobs ?? [];
  }

  async rewrite(change: (jobs: CronJob[]) => CronJob[]): Promise<void> {
    ensureDir(this.stateDir);
    await withFileLock(this.#lockPath, () => {
      const current = readStateFile(this.path, CronFile)?.jobs ?? [];
      const jobs = sortJobs(change(current));
      writeFileAtomic(this.path, `${JSON.stringify(CronFile.parse({ version: 1, jobs }), null, 2)}\n`);
    });
  }
}

/** The jobs of a state dir, the durable ones in its cron.json. */
export class FileCronStore extends CronStore {
  readonly path: string;

  constructor(stateDir: string) {
    const table = new FileCronTable(stateDir);
    super(table);
    this.path = table.path;
  }
}

/** Oldest first (ties by id), as cron.json has always listed them. */
export function sortJobs(jobs: CronJob[]): CronJob[] {
  return [...jobs].sort((a, b) => a.createdAtUtc.localeCompare(b.createdAtUtc) || a.id.localeCompare(b.id));
}
