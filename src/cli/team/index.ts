import { defineCommand } from "citty";
import { globalArgs, sessionArg } from "../args.ts";
import { teamListCommand } from "./list.ts";
import { teamResetCommand } from "./reset.ts";
import { teamRmCommand } from "./rm.ts";
import { teamSendCommand } from "./send.ts";

export const teamCommand = defineCommand({
  meta: { name: "team", description: "Inspect and manage the Lead's teammates" },
  args: { ...sessionArg, ...globalArgs },
  subCommands: { list: teamListCommand, rm: teamRmCommand, reset: teamResetCommand, send: teamSendCommand },
});
