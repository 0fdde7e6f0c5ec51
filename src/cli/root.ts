import { defineCommand } from "citty";
import type { AnyCommand } from "./argv.ts";
import { globalArgs } from "./args.ts";
import { runtimeArgs, sessionArgs } from "./run/runtime-flags.ts";
import { VERSION } from "./version.ts";

// Each command's module is loaded only when the command line names it (or help
// and completion walk the tree): `agent mailbox show` does not load the runtime,
// the model client or MCP, and start-up stays close to a bare `bun`.
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
    ...sessionArgs,
    ...runtimeArgs,
    ...globalArgs,
    version: { type: "boolean", description: "Print the version" },
  },
  subCommands: {
    run: () => import("./run.ts").then((m) => m.runCommand),
    drain: () => import("./drain.ts").then((m) => m.drainCommand),
    team: () => import("./team/index.ts").then((m) => m.teamCommand),
    mailbox: () => import("./mailbox/index.ts").then((m) => m.mailboxCommand),
    cron: () => import("./cron/index.ts").then((m) => m.cronCommand),
    config: () => import("./config/index.ts").then((m) => m.configCommand),
    doctor: () => import("./doctor/command.ts").then((m) => m.doctorCommand),
    init: () => import("./init/command.ts").then((m) => m.initCommand),
    sessions: () => import("./sessions/index.ts").then((m) => m.sessionsCommand),
    completion: () => import("./completion/command.ts").then((m) => m.completionCommand(() => rootCommand)),
    mcp: () => import("./mcp/index.ts").then((m) => m.mcpCommand),
    worker: () => import("./worker.ts").then((m) => m.workerCommand),
    store: () => import("./store/index.ts").then((m) => m.storeCommand),
    trust: () => import("./trust.ts").then((m) => m.trustCommand),
    changes: () => import("./files/changes.ts").then((m) => m.changesCommand),
    rewind: () => import("./files/rewind.ts").then((m) => m.rewindCommand),
  },
});
