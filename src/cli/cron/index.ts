import { defineCommand } from "citty";
import { globalArgs, sessionArg } from "../args.ts";
import { cancelCommand } from "./cancel.ts";
import { listCommand } from "./list.ts";

export const cronCommand = defineCommand({
  meta: { name: "cron", description: "List and cancel the durable scheduled jobs (schedule_cron)" },
  args: { ...sessionArg, ...globalArgs },
  subCommands: { list: listCommand, cancel: cancelCommand },
});
