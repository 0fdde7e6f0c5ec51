import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { configShowCommand } from "./show.ts";

export const configCommand = defineCommand({
  meta: { name: "config", description: "Inspect the settings from the config files, environment and flags" },
  args: { ...globalArgs },
  subCommands: { show: configShowCommand },
});
