import { defineCommand } from "citty";
import { CronStore, type CronJob } from "../../cron/cron-store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession, resolveStateDir } from "../context.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";

const PROMPT_PREVIEW_CHARS = 60;

export const listCommand = defineCommand({
  meta: { name: "list", description: "The durable cron jobs, soonest first, with their next run" },
  args: { ...sessionArg, ...storeArg, ...jsonArg, ...globalArgs },
  async run({ args }) {
    const session = findAdminSession(args);
    // Only durable jobs are stored: the others live in the process that scheduled them.
    let jobs: CronJob[] = [];
    if (session) {
      const opened = await openAdminStores(args, session);
      try {
        jobs = await new CronStore(opened.stores.cron).list();
      } finally {
        await opened.close();
      }
    }
    const where = session ? `session ${session.meta.id}` : resolveStateDir(args);
    if (args.json) await writeJson({ session_id: session?.meta.id ?? null, jobs });
    else await writeOut(jobs.length === 0 ? `no durable cron jobs in ${where}\n` : `session ${session?.meta.id}\n${jobsText(jobs)}`);
  },
});

function preview(prompt: string): string {
  const line = prompt.split("\n", 1)[0] ?? "";
  return line.length > PROMPT_PREVIEW_CHARS || line !== prompt ? `${line.slice(0, PROMPT_PREVIEW_CHARS)}…` : line;
}

function jobsText(jobs: CronJob[]): string {
  const rows = jobs.map((job) => [
    job.id,
    job.cron,
    job.recurring ? "recurring" : "once",
    job.nextRunAtUtc,
    job.lastRunAtUtc ?? "-",
    preview(job.prompt),
  ]);
  return formatTable([["ID", "CRON", "REPEAT", "NEXT RUN (UTC)", "LAST RUN (UTC)", "PROMPT"], ...rows]);
}
