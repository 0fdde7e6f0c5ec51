import { defineCommand } from "citty";
import { SessionStore } from "../../sessions/session-store.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";

export const sessionsRmCommand = defineCommand({
  meta: { name: "rm", description: "Delete a session and all its state (refused while it runs)" },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Session id, unique id prefix or name" },
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const store = new SessionStore(resolveStateDir(args));
    const meta = store.find(args.id);
    await store.remove(meta);
    if (args.json) await writeJson({ removed: meta.id });
    else await writeOut(`removed session ${meta.id}${meta.name === undefined ? "" : ` (${meta.name})`}\n`);
  },
});
