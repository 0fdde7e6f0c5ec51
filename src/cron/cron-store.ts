import { join } from "node:path";
import { z } from "zod";
import { AgentError } from "../core/errors.ts";
import { isMessageId, MessageId, UtcInstant } from "../core/message.ts";
import { ensureDir, writeFileAtomic } from "../storage/atomic-file.ts";
import { withFileLock } from "../storage/file-lock.ts";
import { readStateFile } from "../storage/state-file.ts";
import { isValidCron } from "./cron-expression.ts";

export const CronJob = z.strictObject({
  id: MessageId,
  cron: z.string().refine(isValidCron, "must be a 5-field cron expression"),
  prompt: z.string().min(1),
  recurring: z.boolean(),
  durable: z.boolean(),
  createdAtUtc: UtcInstant,
  /** The slot the job fires at next; a run is identified by it (see cronEventId). */
  nextRunAtUtc: UtcInstant,
  lastRunAtUtc: UtcInstant.optional(),
});
export type CronJob = z.infer<typeof CronJob>;

export const CronFile = z.strictObject({
  version: z.literal(1),
  jobs: z.array(CronJob.refine((job) => job.durable, { message: "only durable jobs are stored", path: ["durable"] })),
});
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
 * The scheduled jobs: durable ones in `<state-dir>/cron.json` (written atomically,
 * validated when read), the others in this object only. Every read-modify-write
 * of the file holds `cron.lock`, so `agent cron cancel` in another process and
 * the runtime recording a run cannot undo each other's change.
 */
export class CronStore {
  readonly path: string;
  readonly #lockPath: string;
  readonly #memory = new Map<string, CronJob>();

  constructor(readonly stateDir: string) {
    this.path = join(stateDir, "cron.json");
    this.#lockPath = join(stateDir, "cron.lock");
  }

  /** The durable jobs as the file has them now (none when there is no file). */
  readDurable(): CronJob[] {
    return readStateFile(this.path, CronFile)?.jobs ?? [];
  }

  /** Every job, durable and not, soonest first. */
  list(): CronJob[] {
    return [...this.readDurable(), ...this.#memory.values()].sort((a, b) => a.nextRunAtUtc.localeCompare(b.nextRunAtUtc));
  }

  async add(job: CronJob): Promise<void> {
    const valid = CronJob.parse(job);
    if (!valid.durable) {
      this.#memory.set(valid.id, valid);
      return;
    }
    await this.#rewrite((jobs) => [...jobs, valid]);
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
    // Nothing to lock for a state dir without a cron.json (e.g. a cancel with a wrong id).
    if (!this.readDurable().some((job) => job.id === id)) return undefined;
    let result: CronJob | null | undefined;
    await this.#rewrite((jobs) => {
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

  async #rewrite(change: (jobs: CronJob[]) => CronJob[]): Promise<void> {
    ensureDir(this.stateDir);
    await withFileLock(this.#lockPath, () => {
      const jobs = change(this.readDurable()).sort((a, b) => a.createdAtUtc.localeCompare(b.createdAtUtc) || a.id.localeCompare(b.id));
      writeFileAtomic(this.path, `${JSON.stringify(CronFile.parse({ version: 1, jobs }), null, 2)}\n`);
    });
  }
}
