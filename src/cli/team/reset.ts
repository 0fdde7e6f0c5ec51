import { defineCommand } from "citty";
import { systemClock } from "../../core/clock.ts";
import { TeammateUnavailableError } from "../../team/teammate-runtime.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { writeJson, writeOut } from "../output.ts";
import { editStoppedTeammate } from "./stopped-session.ts";
import { storeArg } from "../store/store-arg.ts";

export const teamResetCommand = defineCommand({
  meta: { name: "reset", description: "Make a failed teammate idle again in a stopped session, keeping its history" },
  args: {
    name: { type: "positional", required: true, valueHint: "name", description: "The failed teammate" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const name = args.name;
    const { session, value: failure } = await editStoppedTeammate(args, async (teammate, { stores }) => {
      if (teammate.state !== "failed") {
        throw new TeammateUnavailableError(`teammate ${name} is ${teammate.state}, not failed; only a failed teammate can be reset`);
      }
      const { failure: reason, ...rest } = teammate;
      await stores.stores.team.put({ ...rest, state: "idle", updatedAtUtc: systemClock.now().toISOString() });
      return reason;
    });
    if (args.json) {
      await writeJson({ session_id: session.meta.id, reset: name, state: "idle", previous_failure: failure ?? null });
      return;
    }
    await writeOut(`reset ${name}: failed -> idle in session ${session.meta.id}, history kept; its next message wakes it\n`);
  },
});
