import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { sessionsAdoptCommand } from "./adopt.ts";
import { sessionsListCommand } from "./list.ts";
import { sessionsPruneCommand } from "./prune.ts";
import { sessionsRmCommand } from "./rm.ts";
import { sessionsShowCommand } from "./show.ts";

export const sessionsCommand = defineCommand({
  meta: { name: "sessions", description: "List, show, remove, prune and adopt the sessions of the state root" },
  args: { ...globalArgs },
  subCommands: { list: sessionsListCommand, show: sessionsShowCommand, rm: sessionsRmCommand, prune: sessionsPruneCommand, adopt: sessionsAdoptCommand },
});
