import { defineCommand } from "citty";
import { globalArgs, sessionArg } from "../args.ts";
import { storeArg } from "../store/store-arg.ts";

export const mailboxCommand = defineCommand({
  meta: { name: "mailbox", description: "Inspect and administer the durable mailboxes" },
  args: { ...sessionArg, ...storeArg, ...globalArgs },
  subCommands: {
    // Loaded when named (see ../root.ts).
    send: () => import("./send.ts").then((m) => m.sendCommand),
    list: () => import("./list.ts").then((m) => m.listCommand),
    show: () => import("./show.ts").then((m) => m.showCommand),
    recover: () => import("./recover.ts").then((m) => m.recoverCommand),
    prune: () => import("./prune.ts").then((m) => m.pruneCommand),
  },
});
