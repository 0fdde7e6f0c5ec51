import { defineCommand } from "citty";
import { CronStore, assertCronJobId } from "../../cron/cron-store.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
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
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    // The id first: a malformed one is a usage error (exit 2), an unknown one is not found (exit 6).
    const id = assertCronJobId(args.id);
    const opened = await openAdminStores(args, requireAdminSession(args));
    let job;
    try {
      job = await new CronStore(opened.stores.cron).remove(id);
    } finally {
      await opened.close();
    }
    if (args.json) await writeJson({ cancelled: job });
    else await writeOut(`cancelled cron job ${job.id} (${job.cron})\n`);
  },
});
