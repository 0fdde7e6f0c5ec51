import type { SQL } from "bun";
import { CronFile, CronJob, type CronTable, sortJobs } from "../cron/cron-store.ts";
import { lockKey, parseRow, rowName, stateError } from "./state-rows.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * Durable cron jobs in PostgreSQL: one row per job in `agent_cron_jobs`. A
 * rewrite is one transaction under the session's cron advisory lock (the file
 * backend's `cron.lock`), so `agent cron cancel` and the runtime recording a
 * run never undo each other's change.
 */
const DurableJob = lazySchema(() => CronJob.refine((job) => job.durable, { message: "only durable jobs are stored", path: ["durable"] }));

export class PgCronTable implements CronTable {
  constructor(
    readonly sql: SQL,
    readonly session: string,
  ) {}

  async read(): Promise<CronJob[]> {
    try {
      return this.#parse(await this.sql`SELECT id, record FROM agent_cron_jobs WHERE session = ${this.session} ORDER BY created_at_utc, id`);
    } catch (error) {
      throw stateError("reading the cron jobs", error, "nothing was changed");
    }
  }

  async rewrite(change: (jobs: CronJob[]) => CronJob[]): Promise<void> {
    try {
      await this.sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(this.session, "cron")}, 0))`;
        const current = this.#parse(await tx`SELECT id, record FROM agent_cron_jobs WHERE session = ${this.session} ORDER BY created_at_utc, id`);
        // The file's schema checks the whole set (durable only, each job valid) before anything is written.
        const jobs = CronFile.parse({ version: 1, jobs: sortJobs(change(current)) }).jobs;
        await tx`DELETE FROM agent_cron_jobs WHERE session = ${this.session}`;
        for (const job of jobs) {
          await tx`INSERT INTO agent_cron_jobs (session, id, created_at_utc, record) VALUES (${this.session}, ${job.id}, ${job.createdAtUtc}, ${JSON.stringify(job)})`;
        }
      });
    } catch (error) {
      throw stateError("changing the cron jobs", error, "they are as they were");
    }
  }

  #parse(rows: { id: string; record: string }[]): CronJob[] {
    return rows.map((row) => parseRow(row.record, DurableJob, rowName("agent_cron_jobs", this.session, row.id)));
  }
}
