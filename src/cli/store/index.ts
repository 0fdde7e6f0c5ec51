import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { storeArg } from "./store-arg.ts";

export const storeCommand = defineCommand({
  meta: { name: "store", description: "Administer the PostgreSQL store (docs/store.md)" },
  args: { ...storeArg, ...globalArgs },
  subCommands: {
    // Loaded when named (see ../root.ts).
    migrate: () => import("./migrate.ts").then((m) => m.migrateCommand),
  },
});
