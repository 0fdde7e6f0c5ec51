import { defineCommand } from "citty";
import { parseDuration } from "../../core/duration.ts";
import type { PruneResult } from "../../mailbox/store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession } from "../context.ts";
import { openSessionMailbox } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { writeJson, writeOut } from "../output.ts";

export const pruneCommand = defineCommand({
  meta: { name: "prune", description: "Delete done messages older than a duration, so done/ does not grow forever" },
  args: {
    "older-than": {
      type: "string",
      required: true,
      valueHint: "duration",
      description: "Age of the done messages to delete, e.g. 7d, 12h, 1h30m",
    },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const ms = parseDuration(args["older-than"]);
    const session = findAdminSession(args);
    const mailbox = session && (await openSessionMailbox(session, args));
    let result: PruneResult = { pruned: [], orphanMarkers: 0 };
    try {
      // Only done/ is pruned: ready, processing and quarantine are work or evidence.
      if (mailbox && (await mailbox.store.agents()).length > 0) result = await mailbox.store.prune(new Date(Date.now() - ms));
    } finally {
      await mailbox?.close();
    }
    if (args.json) await writeJson(result);
    else await writeOut(`pruned ${result.pruned.length} done message(s) older than ${args["older-than"]}\n`);
  },
});
