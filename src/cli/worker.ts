import { type ArgsDef, defineCommand } from "citty";
import { globalArgs } from "./args.ts";
import { runtimeArgs } from "./run/runtime-flags.ts";

// Only the command's meta and arguments, so `agent worker --help` loads no runtime;
// what it does is in worker-action.ts, loaded when it runs.

// Everything a Lead's runtime is told about the model, tools and store, but
// nothing about waiting for a lock, running teammates elsewhere, the Lead's own tools or showing them in panes.
const { "wait-lock": _waitLock, "remote-teammates": _remote, "teammate-panes": _panes, "lead-mode": _leadMode, ...workerRuntimeArgs } = runtimeArgs;

export const workerArgs = {
  session: { type: "string", valueHint: "id", description: "The session whose teammates to run (short id, id, unique id prefix or name); required" },
  "max-teammates": { type: "string", valueHint: "n", description: "Run at most this many teammates at once (default: no limit)" },
  "lease-ttl": {
    type: "string",
    valueHint: "duration",
    description: "How long a teammate's lease outlives this worker's last heartbeat, e.g. 15s (the default; at least 1s)",
  },
  ...workerRuntimeArgs,
  ...globalArgs,
  quiet: { type: "boolean", description: "Print nothing on stderr but errors" },
} as const satisfies ArgsDef;

export const workerCommand = defineCommand({
  meta: {
    name: "worker",
    description:
      "Run teammates of a session in this process, beside its Lead (on this machine or another one sharing the store): " +
      "takes the teammates no live process holds, until SIGTERM or Ctrl-C",
  },
  args: workerArgs,
  run: (context) => import("./worker-action.ts").then((m) => m.workerAction(context)),
});
