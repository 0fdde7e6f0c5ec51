import { type ArgsDef, defineCommand } from "citty";
import { globalArgs } from "./args.ts";
import { headlessArgs, runtimeArgs, verboseArg } from "./run/runtime-flags.ts";

// Only the command's meta and arguments, so `agent drain --help` loads no runtime;
// what it does is in drain-action.ts, loaded when it runs.

export const drainArgs = {
  session: { type: "string", valueHint: "id", description: "Drain this session (short id, id, unique id prefix or name)" },
  all: { type: "boolean", description: "Drain every session with pending work, one after another" },
  ...runtimeArgs,
  ...headlessArgs,
  ...globalArgs,
  ...verboseArg,
} as const satisfies ArgsDef;

export const drainCommand = defineCommand({
  meta: {
    name: "drain",
    description:
      "Restore a session's team from disk and run the Lead's event turns until nothing waits for it and no teammate works " +
      "(default: the most recently used session with pending work)",
  },
  args: drainArgs,
  run: (context) => import("./drain-action.ts").then((m) => m.drainAction(context)),
});
