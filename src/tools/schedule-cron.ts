import { z } from "zod";
import type { CronRuntime } from "../cron/cron-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const ScheduleCronInput = lazySchema(() =>
  z.strictObject({
    cron: z
      .string()
      .describe("When, as a 5-field cron expression: minute hour day-of-month month day-of-week, e.g. \"*/15 * * * *\" or \"0 9 * * 1-5\"."),
    prompt: z.string().describe("What to do each time it fires, complete: it arrives later as a message to you."),
    recurring: z.boolean().describe("true: fire at every matching time; false: fire once, at the next matching time, then forget the job."),
    durable: z
      .boolean()
      .describe("true: kept in the state dir and still scheduled after a restart; false: only while this process runs."),
  }),
);
export type ScheduleCronInput = z.infer<typeof ScheduleCronInput>;

export function scheduleCronTool(cron: CronRuntime) {
  return defineTool({
    name: "schedule_cron",
    description:
      "Schedule a prompt for later: when the cron expression next matches (in the machine's time zone), the prompt " +
      "arrives as a message from `cron` and you act on it then. Returns the job id and its next run time at once. " +
      "A run missed while no agent process ran fires once when one starts. Operators list and cancel durable jobs with `agent cron`.",
    input: ScheduleCronInput,
    effect: "coordinate",
    subject: (input) => input.cron,
    async run(input) {
      const job = await cron.schedule(input);
      const kind = `${job.recurring ? "recurring" : "one-shot"}, ${job.durable ? "durable" : "this process only"}`;
      return { content: `scheduled cron job ${job.id} (${kind}); next run at ${job.nextRunAtUtc}` };
    },
  });
}
