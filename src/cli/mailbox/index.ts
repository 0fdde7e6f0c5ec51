import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { listCommand } from "./list.ts";
import { pruneCommand } from "./prune.ts";
import { recoverCommand } from "./recover.ts";
import { sendCommand } from "./send.ts";
import { showCommand } from "./show.ts";

export const mailboxCommand = defineCommand({
  meta: { name: "mailbox", description: "Inspect and administer the durable mailboxes" },
  args: { ...globalArgs },
  subCommands: {
    send: sendCommand,
    list: listCommand,
    show: showCommand,
    recover: recoverCommand,
    prune: pruneCommand,
  },
});
