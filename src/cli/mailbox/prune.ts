import { defineCommand } from "citty";
import { parseDuration } from "../../core/duration.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession, openMailboxStore } from "../context.ts";
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
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const ms = parseDuration(args["older-than"]);
    const session = findAdminSession(args);
    const store = session && openMailboxStore(session.dir);
    // Only done/ is pruned: ready, processing and quarantine are work or evidence.
    const result = !store || (await store.agents()).length === 0 ? { pruned: [], orphanMarkers: 0 } : await store.prune(new Date(Date.now() - ms));
    if (args.json) await writeJson(result);
    else await writeOut(`pruned ${result.pruned.length} done message(s) older than ${args["older-than"]}\n`);
  },
});
