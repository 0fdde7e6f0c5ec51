import { defineCommand } from "citty";
import { FileCronStore, assertCronJobId } from "../../cron/cron-store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { requireAdminSession } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";

export const cancelCommand = defineCommand({
  meta: {
    name: "cancel",
    description: "Remove a durable cron job; a live runtime sees it gone before its next run",
  },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Job id, as `agent cron list` shows it" },
    ...sessionArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    // The id first: a malformed one is a usage error (exit 2), an unknown one is not found (exit 6).
    const id = assertCronJobId(args.id);
    const job = await new FileCronStore(requireAdminSession(args).dir).remove(id);
    if (args.json) await writeJson({ cancelled: job });
    else await writeOut(`cancelled cron job ${job.id} (${job.cron})\n`);
  },
});
