import { defineCommand } from "citty";
import { globalArgs } from "./args.ts";
import { cronCommand } from "./cron/index.ts";
import { mailboxCommand } from "./mailbox/index.ts";
import { runCommand } from "./run.ts";
import { VERSION } from "./version.ts";

export const rootCommand = defineCommand({
  meta: {
    name: "agent",
    version: VERSION,
    description: "A headless LLM coding agent whose Lead works with persistent teammates over a durable file mailbox",
  },
  args: {
    ...globalArgs,
    version: { type: "boolean", description: "Print the version" },
  },
  subCommands: { run: runCommand, mailbox: mailboxCommand, cron: cronCommand },
});
