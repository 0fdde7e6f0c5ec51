import type { RuntimeEvent } from "../core/runtime-event.ts";
import type { CronJob } from "./cron-store.ts";

/**
 * A run's event id names the job and the slot it fires for: a process that dies
 * before the run is acknowledged fires the same run again after a restart (the
 * Lead's history already has it, so it is not answered twice), never a new one.
 */
export function cronEventId(job: Pick<CronJob, "id" | "nextRunAtUtc">): string {
  return `cron:${job.id}@${job.nextRunAtUtc}`;
}

export function parseCronEventId(eventId: string): { jobId: string; slot: string } {
  const match = /^cron:([^@]+)@(.+)$/.exec(eventId);
  if (!match) throw new Error(`not a cron event id: ${eventId}`);
  return { jobId: match[1]!, slot: match[2]! };
}

/** The job's prompt as the Lead gets it, with a line naming the job (so it can cancel or recognise it). */
export function cronEvent(job: CronJob): RuntimeEvent {
  const kind = job.recurring ? "recurring" : "one-shot";
  const note = `[scheduled job ${job.id} (${kind}, cron "${job.cron}") fired for ${job.nextRunAtUtc}]`;
  return {
    eventId: cronEventId(job),
    source: "cron",
    sender: "cron",
    kind: "cron",
    content: `${job.prompt}\n\n${note}`,
    // The slot, not the moment it fired: the same run reads the same after a restart.
    createdAtUtc: job.nextRunAtUtc,
  };
}
