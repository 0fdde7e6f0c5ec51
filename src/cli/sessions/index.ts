import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { sessionsListCommand } from "./list.ts";
import { sessionsRmCommand } from "./rm.ts";

export const sessionsCommand = defineCommand({
  meta: { name: "sessions", description: "List and remove the sessions of the state root" },
  args: { ...globalArgs },
  subCommands: { list: sessionsListCommand, rm: sessionsRmCommand },
});
