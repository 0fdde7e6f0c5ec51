import { defineCommand } from "citty";
import { globalArgs, sessionArg } from "../args.ts";
import { teamListCommand } from "./list.ts";

export const teamCommand = defineCommand({
  meta: { name: "team", description: "Inspect the Lead's teammates" },
  args: { ...sessionArg, ...globalArgs },
  subCommands: { list: teamListCommand },
});
