import { defineCommand } from "citty";
import type { AnyCommand } from "./argv.ts";
import { globalArgs } from "./args.ts";
import { completionCommand } from "./completion/command.ts";
import { configCommand } from "./config/index.ts";
import { doctorCommand } from "./doctor/command.ts";
import { drainCommand } from "./drain.ts";
import { initCommand } from "./init/command.ts";
import { cronCommand } from "./cron/index.ts";
import { mailboxCommand } from "./mailbox/index.ts";
import { mcpCommand } from "./mcp/index.ts";
import { runCommand } from "./run.ts";
import { runtimeArgs } from "./run/runtime-args.ts";
import { teamCommand } from "./team/index.ts";
import { VERSION } from "./version.ts";

export const rootCommand: AnyCommand = defineCommand({
  meta: {
    name: "agent",
    version: VERSION,
    description:
      "A headless LLM coding agent whose Lead works with persistent teammates over a durable file mailbox; " +
      "with no command, on a terminal, an interactive session with the Lead (the options below are the session's)",
  },
  args: {
    // The interactive session's (src/cli/session/command.ts): `agent --model m`.
    ...runtimeArgs,
    ...globalArgs,
    version: { type: "boolean", description: "Print the version" },
  },
  subCommands: {
    run: runCommand,
    drain: drainCommand,
    team: teamCommand,
    mailbox: mailboxCommand,
    cron: cronCommand,
    config: configCommand,
    doctor: doctorCommand,
    init: initCommand,
    completion: completionCommand(() => rootCommand),
    mcp: mcpCommand,
  },
});
